//! all-MiniLM-L6-v2 in candle: tokenize (WordPiece, lowercased, at most 256 tokens — the
//! model's `max_seq_length`), run the 6-layer BERT, mean-pool the last layer over the real
//! tokens, L2-normalise.

use std::fmt;
use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{PaddingParams, Tokenizer, TruncationParams};

use crate::error::{Error, Result};

/// The model's output size.
pub const DIMENSIONS: usize = 384;
/// sentence-transformers' `max_seq_length` for this model.
const MAX_TOKENS: usize = 256;
/// Texts per forward pass: big enough to use both cores, small enough that one long text does
/// not pad many short ones far.
const BATCH: usize = 16;

pub struct LocalModel {
    model: BertModel,
    tokenizer: Tokenizer,
}

impl fmt::Debug for LocalModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("LocalModel(all-MiniLM-L6-v2)")
    }
}

fn model_error(dir: &Path, what: impl fmt::Display) -> Error {
    Error::InvalidInput(format!(
        "the local model in {} cannot be used: {what} (fetch it with `engram models fetch`)",
        dir.display()
    ))
}

impl LocalModel {
    /// Loads the model from `dir`.
    pub fn load(dir: &Path) -> Result<LocalModel> {
        let weights = dir.join("model.safetensors");
        for file in ["config.json", "tokenizer.json", "model.safetensors"] {
            if !dir.join(file).is_file() {
                return Err(model_error(dir, format!("{file} is missing")));
            }
        }
        let config_text =
            std::fs::read_to_string(dir.join("config.json")).map_err(|e| model_error(dir, e))?;
        let config: Config = serde_json::from_str(&config_text).map_err(|e| model_error(dir, e))?;
        let mut tokenizer =
            Tokenizer::from_file(dir.join("tokenizer.json")).map_err(|e| model_error(dir, e))?;
        // The file pads every text to 128 tokens; pad a batch only to its longest text.
        tokenizer.with_padding(Some(PaddingParams::default()));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..TruncationParams::default()
            }))
            .map_err(|e| model_error(dir, e))?;
        // Read, not memory-mapped: mapping needs `unsafe` (a file changed underneath is
        // undefined behaviour), and every weight is touched by the first pass anyway.
        let bytes = std::fs::read(&weights).map_err(|e| model_error(dir, e))?;
        let vb = VarBuilder::from_buffered_safetensors(bytes, DType::F32, &Device::Cpu)
            .map_err(|e| model_error(dir, e))?;
        let model = BertModel::load(vb, &config).map_err(|e| model_error(dir, e))?;
        Ok(LocalModel { model, tokenizer })
    }

    /// Unit vectors for `texts`, in order. Blocking: CPU work.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        // Similar lengths batch together: less padding to compute.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut vectors: Vec<Vec<f32>> = vec![Vec::new(); texts.len()];
        for chunk in order.chunks(BATCH) {
            let batch: Vec<&str> = chunk.iter().map(|&i| texts[i]).collect();
            for (&i, vector) in chunk.iter().zip(self.embed_batch(&batch)?) {
                vectors[i] = vector;
            }
        }
        Ok(vectors)
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let failed = |e: &dyn fmt::Display| Error::InvalidInput(format!("embedding failed: {e}"));
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| failed(&e))?;
        let rows = |pick: fn(&tokenizers::Encoding) -> &[u32]| -> Result<Tensor> {
            let rows: Vec<Tensor> = encodings
                .iter()
                .map(|e| Tensor::new(pick(e), &Device::Cpu))
                .collect::<candle_core::Result<_>>()
                .map_err(|e| failed(&e))?;
            Tensor::stack(&rows, 0).map_err(|e| failed(&e))
        };
        let ids = rows(tokenizers::Encoding::get_ids)?;
        let mask = rows(tokenizers::Encoding::get_attention_mask)?;
        let pooled = (|| -> candle_core::Result<Vec<Vec<f32>>> {
            let types = ids.zeros_like()?;
            let hidden = self.model.forward(&ids, &types, Some(&mask))?;
            let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
            let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
            let mean = summed.broadcast_div(&mask.sum(1)?)?;
            let norm = mean.sqr()?.sum_keepdim(1)?.sqrt()?;
            mean.broadcast_div(&norm)?.to_vec2()
        })()
        .map_err(|e| failed(&e))?;
        Ok(pooled)
    }
}
