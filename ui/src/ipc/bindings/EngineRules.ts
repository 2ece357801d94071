// Generated from the engine by src-tauri/src/bindings.rs. Do not edit by hand.

export const MAX_INDEX_LINES = 200;
export const MAX_INDEX_BYTES = 25000;
export const MEMORY_TYPES = ["user", "feedback", "project", "reference"] as const;
export const FIXABLE_RULES = ["dangling-pointer", "orphan-file", "long-index-line"] as const;
