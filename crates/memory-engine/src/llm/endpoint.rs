//! What the HTTP providers share: an endpoint (the HTTP client, the options, the URL) and one
//! round trip — POST a JSON body, retried, bounded and cancellable as [`retry::send`] does, then
//! the provider's parser on the answer — with every error labelled `{provider} ({url})`. The
//! providers differ only in how they authenticate, the body they build and the answer they read.

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::retry;
use super::{clip, http_client, join_url, ClientOptions};
use crate::error::{Error, Result};

#[derive(Debug)]
pub(crate) struct Endpoint {
    http: reqwest::Client,
    pub(crate) options: ClientOptions,
    url: String,
}

impl Endpoint {
    /// `path` below the options' base URL.
    pub(crate) fn new(options: ClientOptions, path: &str) -> Result<Endpoint> {
        Ok(Endpoint {
            http: http_client(&options.base_url)?,
            url: join_url(&options.base_url, path),
            options,
        })
    }

    /// POSTs `body`, with `authorize` adding the provider's credentials to each attempt, and
    /// reads the answer with `parse`.
    pub(crate) async fn post<T>(
        &self,
        provider: &str,
        body: &Value,
        authorize: impl Fn(reqwest::RequestBuilder) -> reqwest::RequestBuilder,
        parse: fn(&[u8]) -> std::result::Result<T, String>,
        cancel: &CancellationToken,
    ) -> Result<T> {
        let label = format!("{provider} ({})", self.url);
        let answer = retry::send(
            || authorize(self.http.post(&self.url).json(body)),
            &self.options.retry,
            self.options.timeout,
            cancel,
            &label,
        )
        .await?;
        parse(&answer.body).map_err(|message| Error::Llm(format!("{label}: {message}")))
    }
}

/// An answer's JSON; the error quotes the start of what came instead.
pub(crate) fn answer_json(body: &[u8]) -> std::result::Result<Value, String> {
    serde_json::from_slice(body).map_err(|e| {
        format!(
            "malformed JSON in the answer ({e}): {}",
            clip(String::from_utf8_lossy(body).trim(), 200)
        )
    })
}

/// The model an answer says it came from; empty when it does not say.
pub(crate) fn answer_model(answer: &Value) -> String {
    answer
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}
