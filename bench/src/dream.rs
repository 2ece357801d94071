//! The dream's quality on `bench/dream-set/`: the near-duplicate decision on the labeled pairs
//! (precision, recall, updates told apart) and the eleven criteria of the messy dir, each met or
//! not, offline and with the local model when it is installed.

use std::path::Path;

use memory_engine::dream::offline::quality::{self, DREAM_SET};
use memory_engine::embed::Embedder;
use memory_engine::llm::ProviderKind;
use memory_engine::Engine;

pub fn dream_quality(engine: &Engine, corpus: &Path) -> Result<(), String> {
    let set = Path::new(DREAM_SET);
    let local = match engine.embeddings().local_model() {
        Ok(_) => Some(engine.embeddings().clone()),
        Err(e) => {
            println!("dream with the local model not measured: {e}");
            None
        }
    };
    println!();
    println!(
        "{:<9} {:>6} {:>10} {:>7} {:>14}   (near-duplicates, labeled pairs)",
        "dream", "pairs", "precision", "recall", "updates found"
    );
    let mut providers: Vec<(&str, Option<&dyn Embedder>)> = vec![("offline", None)];
    if let Some(local) = &local {
        providers.push(("local", Some(local.as_ref())));
    }
    for (name, embedder) in &providers {
        let scores = quality::measure_pairs(set, *embedder)?;
        println!(
            "{:<9} {:>6} {:>10.2} {:>7.2} {:>11}/{}",
            name,
            scores.pairs,
            scores.precision(),
            scores.recall(),
            scores.updates_found,
            scores.updates
        );
        if std::env::var_os("ENGRAM_BENCH_MISSES").is_some() {
            for wrong in &scores.wrong {
                println!("    {wrong}");
            }
        }
    }

    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let models = engine.embeddings().models_dir().to_path_buf();
    let mut runs = vec![(
        "offline",
        runtime.block_on(quality::score_messy_dir(
            set,
            &corpus.join("dream-messy-offline"),
            ProviderKind::Offline,
            None,
        ))?,
    )];
    if local.is_some() {
        runs.push((
            "local",
            runtime.block_on(quality::score_messy_dir(
                set,
                &corpus.join("dream-messy-local"),
                ProviderKind::Local,
                Some(&models),
            ))?,
        ));
    }
    println!();
    print!("{:<36}", "messy dir, staged and accepted whole");
    for (name, _) in &runs {
        print!(" {name:>8}");
    }
    println!();
    for (i, criterion) in runs[0].1.criteria.iter().enumerate() {
        print!("{:<36}", criterion.name);
        for (_, score) in &runs {
            print!(" {:>8}", if score.criteria[i].met { "met" } else { "NOT" });
        }
        println!();
    }
    print!("{:<36}", "criteria met");
    for (_, score) in &runs {
        print!(
            " {:>8}",
            format!("{}/{}", score.met(), score.criteria.len())
        );
    }
    println!();
    print!("{:<36}", "facts kept");
    for (_, score) in &runs {
        print!(
            " {:>8}",
            format!(
                "{}/{}",
                score.facts_kept,
                score.facts_kept + score.facts_lost.len()
            )
        );
    }
    println!();
    print!("{:<36}", "files a second dream changes");
    for (_, score) in &runs {
        print!(" {:>8}", score.again);
    }
    println!();
    for (name, score) in &runs {
        for criterion in score.criteria.iter().filter(|c| !c.met) {
            println!(
                "    {name}: {} not met: {}",
                criterion.name, criterion.detail
            );
        }
        for fact in &score.facts_lost {
            println!("    {name}: fact lost: {fact}");
        }
    }
    Ok(())
}
