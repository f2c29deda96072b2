//! Scores two video files with a model and prints each frame's score: the
//! library API in a dozen lines.
//!
//! ```sh
//! cargo run --release --example score -- examples/data/ref_576x324.y4m \
//!     examples/data/dist_576x324_x264_crf30.y4m vmaf_v0.6.1
//! ```

use vmafx::io::open;
use vmafx::model::{Model, ModelSpec};
use vmafx::ContextBuilder;

fn main() -> Result<(), vmafx::Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [reference, distorted, version] = args.as_slice() else {
        eprintln!("usage: score REFERENCE.y4m DISTORTED.y4m MODEL_VERSION");
        std::process::exit(2);
    };
    let mut refs = open(reference.as_ref(), None)?;
    let mut dist = open(distorted.as_ref(), None)?;
    let model = Model::load(&ModelSpec::version(version))?;
    let name = model.name().to_string();
    let mut ctx = ContextBuilder::new(refs.format())
        .model(model)
        .threads(2)
        .build()?;
    loop {
        // Lent by the context: memory reused once it has been read.
        let (mut r, mut d) = (ctx.picture()?, ctx.picture()?);
        if !refs.read_into(&mut r)? || !dist.read_into(&mut d)? {
            break;
        }
        ctx.submit(r, d)?;
    }
    for (frame, values) in ctx.finish()?.frames {
        let score = values
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(f64::NAN, |(_, v)| *v);
        println!("frame {frame:3}: {name} {score:.6}");
    }
    Ok(())
}
