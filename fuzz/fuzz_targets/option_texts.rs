//! `--model` and `--feature` texts (the first byte picks which): parsed,
//! built into a context, and a feature context scores one frame.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vmafx::model::{Model, ModelSpec};
use vmafx::{ChromaSubsampling, ContextBuilder, HostPicture, PictureFormat};

fuzz_target!(|data: &[u8]| {
    let [which, text @ ..] = data else {
        return;
    };
    let Ok(text) = std::str::from_utf8(text) else {
        return;
    };
    let format = PictureFormat::new(64, 48, ChromaSubsampling::Yuv420, 8).unwrap();
    if which % 2 == 0 {
        if let Ok(spec) = ModelSpec::parse(text) {
            if let Ok(model) = Model::load(&spec) {
                let _ = ContextBuilder::new(format).model(model).build();
            }
        }
    } else if let Ok((name, options)) = vmafx::feature::options::parse_feature_spec(text) {
        if let Ok(mut ctx) = ContextBuilder::new(format).feature(&name, options).build() {
            let p = HostPicture::new(format);
            if ctx.submit(p.clone(), p).is_ok() {
                let _ = ctx.finish();
            }
        }
    }
});
