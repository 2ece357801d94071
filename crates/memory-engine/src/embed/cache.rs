//! The embedding cache: one append-only file per model in Engram's data dir —
//! `ENGRAMVEC` + the dimension count (u32 LE), then records of the text's SHA-256 (32 bytes) and
//! its vector (f32 LE). Appends hold an exclusive lock on `<file>.lock` beside it, so the app and a
//! hook process can add at the same time; the data file itself is never locked, because on
//! Windows a lock is mandatory and would make every reader fail while an append runs. A record
//! torn by a crash is cut off at the next open.
//! Vectors only ever depend on the text, so a stale entry is never wrong, only unused.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{OnceLock, RwLock};

use fs4::fs_std::FileExt;
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

const MAGIC: &[u8; 9] = b"ENGRAMVEC";
const HEADER: usize = MAGIC.len() + 4;

type Key = [u8; 32];

#[derive(Debug)]
pub struct EmbeddingCache {
    path: PathBuf,
    /// Fixed by the model, or (for a server's model) by the file or the first vector stored.
    dimensions: OnceLock<usize>,
    vectors: RwLock<HashMap<Key, Vec<f32>>>,
}

fn key(text: &str) -> Key {
    Sha256::digest(text.as_bytes()).into()
}

fn io_error(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::InvalidInput(format!("{}: {e}", path.display()))
}

impl EmbeddingCache {
    /// Opens (or starts) the cache at `path`. A file of another format or size of vector is set
    /// aside as `<name>.old` and a new one started: the cache only ever saves work.
    pub fn open(path: PathBuf, dimensions: usize) -> Result<EmbeddingCache> {
        EmbeddingCache::open_sized(path, Some(dimensions))
    }

    /// Opens the cache of a model whose vector size is not known before its first answer: the
    /// size is the file's, else the first vector stored's.
    pub fn open_any_size(path: PathBuf) -> Result<EmbeddingCache> {
        EmbeddingCache::open_sized(path, None)
    }

    fn open_sized(path: PathBuf, wanted: Option<usize>) -> Result<EmbeddingCache> {
        let mut vectors = HashMap::new();
        let dimensions = OnceLock::new();
        if let Some(wanted) = wanted {
            let _ = dimensions.set(wanted);
        }
        match fs::read(&path) {
            Ok(bytes) => {
                let in_file =
                    (bytes.len() >= HEADER && &bytes[..MAGIC.len()] == MAGIC).then(|| {
                        let mut size = [0u8; 4];
                        size.copy_from_slice(&bytes[MAGIC.len()..HEADER]);
                        u32::from_le_bytes(size) as usize
                    });
                let header_ok = match (in_file, wanted) {
                    (Some(found), Some(wanted)) => found == wanted,
                    (Some(found), None) => found > 0 && dimensions.set(found).is_ok(),
                    (None, _) => false,
                };
                if header_ok {
                    let record = 32 + 4 * dimensions.get().copied().unwrap_or_default();
                    for chunk in bytes[HEADER..].chunks_exact(record) {
                        let mut k = [0u8; 32];
                        k.copy_from_slice(&chunk[..32]);
                        let vector = chunk[32..]
                            .chunks_exact(4)
                            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                            .collect();
                        vectors.insert(k, vector);
                    }
                } else {
                    crate::platform::fs::rename(&path, &path.with_extension("old"))
                        .map_err(|e| io_error(&path, e))?;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_error(&path, e)),
        }
        Ok(EmbeddingCache {
            path,
            dimensions,
            vectors: RwLock::new(vectors),
        })
    }

    /// How many vectors the cache holds.
    pub fn len(&self) -> usize {
        self.vectors.read().map_or(0, |v| v.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether `text`'s vector was computed before.
    pub fn contains(&self, text: &str) -> bool {
        self.vectors
            .read()
            .is_ok_and(|vectors| vectors.contains_key(&key(text)))
    }

    /// The vector of `text`, if computed before.
    pub fn get(&self, text: &str) -> Option<Vec<f32>> {
        self.vectors.read().ok()?.get(&key(text)).cloned()
    }

    /// Adds vectors (kept in memory, appended to the file).
    pub fn insert<'a>(
        &self,
        entries: impl IntoIterator<Item = (&'a str, &'a [f32])>,
    ) -> Result<()> {
        let mut bytes = Vec::new();
        let mut added = Vec::new();
        for (text, vector) in entries {
            let dimensions = *self.dimensions.get_or_init(|| vector.len());
            if vector.len() != dimensions || dimensions == 0 {
                return Err(Error::InvalidInput(format!(
                    "{}: a vector of {} dimensions for a cache of {dimensions}",
                    self.path.display(),
                    vector.len(),
                )));
            }
            let k = key(text);
            bytes.extend_from_slice(&k);
            for x in vector {
                bytes.extend_from_slice(&x.to_le_bytes());
            }
            added.push((k, vector.to_vec()));
        }
        if added.is_empty() {
            return Ok(());
        }
        self.append(&bytes)?;
        if let Ok(mut vectors) = self.vectors.write() {
            vectors.extend(added);
        }
        Ok(())
    }

    /// The file whose lock serialises appends: `<file>.lock`, never the data file (see the
    /// module docs).
    fn lock_path(&self) -> PathBuf {
        let mut name = self.path.clone().into_os_string();
        name.push(".lock");
        PathBuf::from(name)
    }

    /// Appends whole records under the cache's lock, after cutting a torn record off the end.
    fn append(&self, records: &[u8]) -> Result<()> {
        let path = &self.path;
        let dimensions = self.dimensions.get().copied().unwrap_or_default();
        if let Some(parent) = path.parent() {
            crate::disk::create_dir_all(parent).map_err(|e| io_error(parent, e))?;
        }
        let lock_path = self.lock_path();
        let lock: File = crate::disk::with_mode_for(
            OpenOptions::new().write(true).create(true).truncate(false),
            &lock_path,
        )
        .open(&lock_path)
        .map_err(|e| io_error(&lock_path, e))?;
        lock.lock_exclusive().map_err(|e| io_error(&lock_path, e))?;
        let mut file: File = crate::disk::with_mode_for(
            OpenOptions::new().read(true).append(true).create(true),
            path,
        )
        .open(path)
        .map_err(|e| io_error(path, e))?;
        let result = (|| -> std::io::Result<()> {
            let len = file.metadata()?.len() as usize;
            if len < HEADER {
                file.set_len(0)?;
                let mut header = MAGIC.to_vec();
                header.extend_from_slice(&(dimensions as u32).to_le_bytes());
                file.write_all(&header)?;
            } else {
                let record = 32 + 4 * dimensions;
                let whole = HEADER + (len - HEADER) / record * record;
                if whole != len {
                    file.set_len(whole as u64)?;
                }
            }
            file.write_all(records)?;
            file.sync_data()
        })();
        drop(file);
        let _ = FileExt::unlock(&lock);
        result.map_err(|e| io_error(path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_survive_a_reopen_and_a_torn_record_is_cut() {
        let temp = tempfile::tempdir().expect("temp");
        let path = temp.path().join("embeddings/m.bin");
        let cache = EmbeddingCache::open(path.clone(), 3).expect("open");
        assert!(cache.is_empty());
        cache
            .insert([
                ("alpha", &[1.0, 0.0, 0.0][..]),
                ("beta", &[0.0, 1.0, 0.0][..]),
            ])
            .expect("insert");
        assert_eq!(cache.get("alpha"), Some(vec![1.0, 0.0, 0.0]));
        // A crash in the middle of an append leaves half a record.
        let mut file = OpenOptions::new().append(true).open(&path).expect("open");
        file.write_all(&[7u8; 20]).expect("torn");
        drop(file);
        let again = EmbeddingCache::open(path.clone(), 3).expect("reopen");
        assert_eq!(again.len(), 2);
        again
            .insert([("gamma", &[0.0, 0.0, 1.0][..])])
            .expect("insert");
        let third = EmbeddingCache::open(path.clone(), 3).expect("reopen");
        assert_eq!(third.get("beta"), Some(vec![0.0, 1.0, 0.0]));
        assert_eq!(third.get("gamma"), Some(vec![0.0, 0.0, 1.0]));
        assert_eq!(third.len(), 3);
        // Another vector size starts over, the old file set aside.
        let other = EmbeddingCache::open(path.clone(), 4).expect("other");
        assert!(other.is_empty());
        assert!(path.with_extension("old").is_file());

        // A server's model: the size comes from the file, else from the first vector.
        let any = EmbeddingCache::open_any_size(path.clone()).expect("any");
        assert!(any.is_empty());
        any.insert([("delta", &[0.5, 0.5][..])])
            .expect("first fixes 2");
        assert!(any.insert([("eps", &[1.0, 0.0, 0.0][..])]).is_err());
        let again = EmbeddingCache::open_any_size(path.clone()).expect("any");
        assert_eq!(again.get("delta"), Some(vec![0.5, 0.5]));
    }

    /// Platforms row 14: appends lock `<file>.lock`, never the data file, which readers open
    /// (on Windows a lock on it is mandatory and would fail them mid-append). Here a lock held on
    /// the data file by someone else must not stop an append: with the old lock the append waits
    /// for it forever, so the guard below is a deadlock guard, not a speed bound.
    #[test]
    fn appends_lock_a_separate_file_never_the_data_file() {
        let temp = tempfile::tempdir().expect("temp");
        let path = temp.path().join("embeddings/m.bin");
        let cache = EmbeddingCache::open(path.clone(), 2).expect("open");
        cache.insert([("alpha", &[1.0, 0.0][..])]).expect("insert");
        assert!(
            temp.path().join("embeddings/m.bin.lock").is_file(),
            "the lock file sits beside the data"
        );
        let reader = File::open(&path).expect("a reader opens the data file");
        reader
            .lock_exclusive()
            .expect("nobody else locks the data file");
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = done.send(cache.insert([("beta", &[0.0, 1.0][..])]).is_ok());
        });
        assert_eq!(
            finished.recv_timeout(std::time::Duration::from_secs(300)),
            Ok(true),
            "the append must not wait on a lock of the data file"
        );
        drop(reader);
        let again = EmbeddingCache::open(path, 2).expect("reopen");
        assert_eq!(again.get("beta"), Some(vec![0.0, 1.0]));
    }
}
