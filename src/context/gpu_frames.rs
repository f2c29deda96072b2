//! HOOK: imported frames on the GPU engine (issue 6, GPU half).
//!
//! `Context::submit_frames` calls this for each pair in submission order,
//! once the host-waited acquire fences (sync_file, host fence, host-waited
//! Vulkan timeline, GL sync) have signalled. Device fences (CUDA/HIP events,
//! Vulkan semaphore fds) are still in the frames' `Acquire`, for the library
//! stream to wait on; device release signals are in `Frame::releases`. The
//! frames' last references are the ones passed here: the producer's release
//! fires when they drop, so a device binding keeps them until the last
//! kernel reading them is done.
//!
//! For now (the device binding is the other half of the issue) this reads
//! host-mappable frames on the host and uploads them like host pictures;
//! device memory and device fences are refused as not yet bound.

use super::*;
use crate::import::host_read::{device_only_part, read_frame};
use crate::import::Frame;

impl GpuEngine {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn submit_frames(
        &mut self,
        index: u32,
        reference: Frame,
        distorted: Frame,
        scored: bool,
        slots: &[Slot],
        collector: &mut FeatureCollector,
        error: &mut Option<Error>,
    ) -> Result<()> {
        for frame in [&reference, &distorted] {
            if let Some((e, what)) = device_only_part(frame) {
                return Err(e
                    .reason(format!(
                        "{what} is not yet bound on the GPU engine (it reads host-mappable \
                         frames only so far)"
                    ))
                    .into());
            }
        }
        let planes = self.planes_needed();
        let pair = Arc::new((
            read_frame(&reference, planes)?,
            read_frame(&distorted, planes)?,
        ));
        // The copies are ours: the producer may reuse its memory now.
        drop((reference, distorted));
        self.submit(index, pair, scored, slots, collector, error)
    }
}
