// src-tauri/src/commands/sessions.rs: a project's Claude Code sessions, a page of a transcript,
// and extracting memories from a session (staged for review).

import type { ExtractOutcome } from "./bindings/ExtractOutcome";
import type { SessionHit } from "./bindings/SessionHit";
import type { SessionMemoryView } from "./bindings/SessionMemoryView";
import type { SessionSummary } from "./bindings/SessionSummary";
import type { TranscriptPage } from "./bindings/TranscriptPage";
import { call } from "./call";

export const sessionsCommands = {
  /** Most recently active first. */
  listSessions: (project: string) => call<SessionSummary[]>("list_sessions", { project }),
  /** Messages `offset..offset + limit` of the session's conversation. */
  readTranscript: (project: string, session: string, offset: number, limit: number) =>
    call<TranscriptPage>("read_transcript", { project, session, offset, limit }),
  /** The whole session, staged as a change set for the review screen. */
  extractSession: (project: string, session: string) =>
    call<ExtractOutcome>("extract_session", { project, session }),
  /** The session's summary.md, with what is due. */
  sessionSummary: (project: string, session: string) =>
    call<SessionMemoryView>("session_summary", { project, session }),
  /** Prompts, replies, tool names and file paths across the project's sessions, best first. */
  searchSessions: (project: string, query: string) =>
    call<SessionHit[]>("search_sessions", { project, query }),
  /** Writes summary.md now (the configured model, else offline). */
  updateSessionSummary: (project: string, session: string) =>
    call<SessionMemoryView>("update_session_summary", { project, session }),
};
