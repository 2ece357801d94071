//! Extraction precision on the labeled set (`bench/extract-set/`): precision and recall of the
//! offline extractor on the tuning half and on the held-out half, the reported figure.
//! `ENGRAM_BENCH_MISSES=1` lists every turn it got wrong.

use std::path::Path;

use memory_engine::extract::quality::{self, EXTRACT_SET, HELDOUT, TUNE};

pub fn extract_quality() -> Result<(), String> {
    println!();
    println!(
        "{:<9} {:<9} {:>6} {:>7} {:>6} {:>10} {:>7}",
        "extract", "set", "turns", "to save", "saved", "precision", "recall"
    );
    for (label, half) in [("tuning", TUNE), ("held-out", HELDOUT)] {
        let measured =
            quality::measure(&Path::new(EXTRACT_SET).join(half)).map_err(|e| e.to_string())?;
        let q = &measured.quality;
        println!(
            "{:<9} {:<9} {:>6} {:>7} {:>6} {:>10.2} {:>7.2}",
            "offline", label, q.turns, q.should_save, q.saved, q.precision, q.recall
        );
        if std::env::var_os("ENGRAM_BENCH_MISSES").is_some() {
            for miss in &measured.misses {
                println!("    {miss}");
            }
        }
    }
    Ok(())
}
