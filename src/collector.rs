//! Per-frame feature values, gathered from extractor slots that may finish
//! frames out of order (threads), and read back in a fixed order.

use std::collections::{BTreeMap, HashMap};

/// Values one extractor slot produced. Names are kept in first-emission
/// order, which is the same on every frame, so the output order does not
/// depend on thread timing.
#[derive(Debug, Default)]
struct SlotValues {
    names: Vec<String>,
    ids: HashMap<String, usize>,
    frames: BTreeMap<u32, Vec<(usize, f64)>>,
    aggregates: Vec<(String, f64)>,
}

#[derive(Debug, Default)]
pub struct FeatureCollector {
    slots: Vec<SlotValues>,
}

impl FeatureCollector {
    pub fn new(slot_count: usize) -> Self {
        Self {
            slots: (0..slot_count).map(|_| SlotValues::default()).collect(),
        }
    }

    pub fn add(&mut self, slot: usize, frame: u32, name: String, value: f64) {
        let s = &mut self.slots[slot];
        let id = match s.ids.get(&name) {
            Some(&id) => id,
            None => {
                s.names.push(name.clone());
                s.ids.insert(name, s.names.len() - 1);
                s.names.len() - 1
            }
        };
        s.frames.entry(frame).or_default().push((id, value));
    }

    /// Records a whole-run value (psnr's aPSNR).
    pub fn add_aggregate(&mut self, slot: usize, name: String, value: f64) {
        self.slots[slot].aggregates.push((name, value));
    }

    /// Whole-run values in slot order.
    pub fn aggregates(&self) -> Vec<(String, f64)> {
        self.slots.iter().flat_map(|s| s.aggregates.iter().cloned()).collect()
    }

    /// The features of one frame in slot order. When two slots produce the
    /// same name (the same extractor requested twice with options that do not
    /// change its outputs), the first one is kept.
    pub fn frame(&self, frame: u32) -> Vec<(String, f64)> {
        let mut out: Vec<(String, f64)> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for s in &self.slots {
            if let Some(values) = s.frames.get(&frame) {
                let mut values = values.clone();
                values.sort_by_key(|&(id, _)| id);
                for (id, v) in values {
                    if seen.insert(&s.names[id]) {
                        out.push((s.names[id].clone(), v));
                    }
                }
            }
        }
        out
    }
}
