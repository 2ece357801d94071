//! `engram`: parse arguments, call one engine operation, render its result.

fn main() {
    println!("engram {}", env!("CARGO_PKG_VERSION"));
}
