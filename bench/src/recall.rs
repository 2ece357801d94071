//! Recall quality on the labeled set (`bench/recall-set/`): recall@5, MRR and how many of the
//! prompts nothing relates to inject nothing, per provider — `offline` (lexical), and `local`
//! (hybrid with the real local model) when the model is installed.

use std::path::Path;

use memory_engine::recall::quality::{self as recall_set, Measured, RECALL_SET};
use memory_engine::recall::Selector;
use memory_engine::Engine;

pub fn recall_quality(engine: &Engine, selectors: &[(&str, Selector)]) -> Result<(), String> {
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    println!();
    println!(
        "{:<9} {:<11} {:>7} {:>9} {:>6}  {:>13}",
        "recall", "prompts", "n", "recall@5", "MRR", "none: silent"
    );
    for (name, selector) in selectors {
        let measured: Measured =
            runtime.block_on(recall_set::measure(engine, Path::new(RECALL_SET), selector));
        let overall = &measured.overall;
        println!(
            "{:<9} {:<11} {:>7} {:>9.2} {:>6.2}  {:>10}/{}",
            name,
            "all",
            overall.prompts,
            overall.recall_at_5,
            overall.mrr,
            overall.none_silent,
            overall.none
        );
        for (kind, quality) in &measured.by_kind {
            if kind == "none" {
                continue;
            }
            println!(
                "{:<9} {:<11} {:>7} {:>9.2} {:>6.2}",
                name, kind, quality.prompts, quality.recall_at_5, quality.mrr
            );
        }
        if std::env::var_os("ENGRAM_BENCH_MISSES").is_some() {
            for miss in &measured.misses {
                println!("    miss {miss}");
            }
        }
    }
    Ok(())
}
