// src-tauri/src/commands/team.rs: a project's shared team/ memory and its git sync.

import type { ProjectTeamConfig } from "./bindings/ProjectTeamConfig";
import type { SecretFinding } from "./bindings/SecretFinding";
import type { StagedChangeSet } from "./bindings/StagedChangeSet";
import type { SyncReport } from "./bindings/SyncReport";
import type { TeamStatus } from "./bindings/TeamStatus";
import { call } from "./call";

export const teamCommands = {
  /** Ahead / behind / conflicts against the remote (fetches it). */
  teamStatus: (project: string) => call<TeamStatus>("team_status", { project }),
  teamPull: (project: string) => call<SyncReport>("team_pull", { project }),
  /** Pushes team/ (keys checked, secrets refused): only on the person's click. */
  teamPush: (project: string) => call<SyncReport>("team_push", { project }),
  /** A repo URL or path; `URL#branch` for a branch of another repo. */
  setTeamRemote: (project: string, remote: string) =>
    call<ProjectTeamConfig>("set_team_remote", { project, remote }),
  teamSecrets: (project: string) => call<SecretFinding[]>("team_secrets", { project }),
  /** Stages [REDACTED:<rule>] for each secret in team/, for review; null when there is none. */
  redactTeamSecrets: (project: string) => call<StagedChangeSet | null>("redact_team_secrets", { project }),
};
