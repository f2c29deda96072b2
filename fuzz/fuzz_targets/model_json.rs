//! A model file: loaded (every field validated), and a model that loads
//! predicts any values and builds a context.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vmafx::model::{Model, ModelSpec};
use vmafx::{ChromaSubsampling, ContextBuilder, PictureFormat};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(model) = Model::from_json(text, &ModelSpec::version("fuzzed")) {
        let values: Vec<f64> = (0..model.features().len())
            .map(|i| i as f64 * 0.37 - 1.0)
            .collect();
        let _ = model.predict(&values);
        let _ = model.feature_requests();
        let format = PictureFormat::new(64, 48, ChromaSubsampling::Yuv420, 8).unwrap();
        let _ = ContextBuilder::new(format).model(model).build();
    }
});
