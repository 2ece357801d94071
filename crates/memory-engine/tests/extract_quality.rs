//! Extraction precision on the labeled set (`bench/extract-set/`, see `extract::quality`): the
//! figures `make bench` prints, held above the floors the product promises (issue #21: offline
//! precision ≥ 0.95, recall ≥ 0.8), so a rule that starts saving chatter, reminders or pasted
//! logs — or stops hearing a stated fact — fails here rather than in someone's memory dir.

use std::path::Path;

use memory_engine::extract::quality::{self, Measured, EXTRACT_SET, HELDOUT, TUNE};

fn measured(half: &str) -> (Measured, String) {
    let measured = quality::measure(&Path::new(EXTRACT_SET).join(half)).expect("the set reads");
    let mut report = format!("{half}: {:?}\n", measured.quality);
    for miss in &measured.misses {
        report.push_str(&format!("  {miss}\n"));
    }
    println!("{report}");
    (measured, report)
}

#[test]
fn each_half_has_eighty_turns_about_half_of_them_to_save() {
    for half in [TUNE, HELDOUT] {
        let (measured, report) = measured(half);
        let q = &measured.quality;
        assert!(q.turns >= 80, "{report}");
        assert!(
            q.should_save * 10 >= q.turns * 4 && q.should_save * 10 <= q.turns * 6,
            "roughly half should save: {report}"
        );
    }
    // The halves share no turn: the held-out figure says something only if it was never tuned on.
    let tune = quality::load(&Path::new(EXTRACT_SET).join(TUNE)).expect("tune");
    let heldout = quality::load(&Path::new(EXTRACT_SET).join(HELDOUT)).expect("heldout");
    for turn in &heldout {
        assert!(
            !tune.iter().any(|t| t.text == turn.text),
            "in both halves: {:?}",
            turn.text
        );
    }
}

#[test]
fn offline_extraction_keeps_stated_facts_and_nothing_else_on_the_held_out_half() {
    let (measured, report) = measured(HELDOUT);
    assert!(measured.quality.precision >= 0.95, "{report}");
    assert!(measured.quality.recall >= 0.8, "{report}");
}

#[test]
fn offline_extraction_keeps_stated_facts_and_nothing_else_on_the_tuning_half() {
    let (measured, report) = measured(TUNE);
    assert!(measured.quality.precision >= 0.95, "{report}");
    assert!(measured.quality.recall >= 0.8, "{report}");
}
