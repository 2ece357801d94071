//! Sending one HTTP request to a model server: a per-attempt timeout, retries with exponential
//! backoff on transient failures, `retry-after` honoured, and cancellation raced against every
//! wait.
//!
//! What is retried, as the official SDKs do: connection failures and HTTP 408, 409, 429 and 5xx
//! (Anthropic's 529 "overloaded" included), unless the server says `x-should-retry: false`; a
//! server may also ask for a retry with `x-should-retry: true`. What is not: an attempt that timed
//! out (a server that did not answer within the timeout is more likely hung than busy, and a
//! retry would multiply the caller's wait), and every other 4xx.
//!
//! The delay before retry *n* (from 0) is `retry-after-ms`, else `retry-after` (seconds or an HTTP
//! date) when the server sends one no longer than [`RetryPolicy::max_retry_after`]; otherwise
//! `initial_backoff × 2ⁿ`, capped at `max_backoff`. There is no jitter: Engram sends one request at
//! a time, so there is no herd to spread, and tests stay deterministic.

use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;
use reqwest::StatusCode;
use tokio_util::sync::CancellationToken;

use super::clip;
use crate::error::{Error, Result};

/// How often and how patiently to retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    pub initial_backoff: Duration,
    pub max_backoff: Duration,
    /// A `retry-after` longer than this is ignored in favour of the backoff.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 2,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry` (0 for the first retry).
    pub fn delay(&self, retry: u32, headers: Option<&HeaderMap>) -> Duration {
        if let Some(wait) = headers.and_then(retry_after) {
            if wait <= self.max_retry_after {
                return wait;
            }
        }
        let factor = 2u32.saturating_pow(retry.min(16));
        self.initial_backoff
            .saturating_mul(factor)
            .min(self.max_backoff)
    }
}

/// The server's requested wait: `retry-after-ms`, else `retry-after` as seconds or an HTTP date.
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok()) {
        if ms.is_finite() && ms >= 0.0 {
            return Some(Duration::from_secs_f64(ms / 1000.0));
        }
    }
    let value = header("retry-after")?.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds));
    }
    let at = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let at = SystemTime::from(at);
    Some(
        at.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

fn is_retryable(status: StatusCode, headers: &HeaderMap) -> bool {
    match headers.get("x-should-retry").and_then(|v| v.to_str().ok()) {
        Some("true") => return true,
        Some("false") => return false,
        _ => {}
    }
    matches!(status.as_u16(), 408 | 409 | 429) || status.is_server_error()
}

/// A successful answer: its status and body.
#[derive(Debug)]
pub(crate) struct HttpAnswer {
    pub body: Vec<u8>,
}

/// Sends the request `build` makes (once per attempt) until it succeeds, fails for good, runs
/// out of retries, or `cancel` fires. `label` names the provider and URL in errors.
pub(crate) async fn send(
    build: impl Fn() -> reqwest::RequestBuilder,
    policy: &RetryPolicy,
    timeout: Duration,
    cancel: &CancellationToken,
    label: &str,
) -> Result<HttpAnswer> {
    let mut retry = 0;
    loop {
        if cancel.is_cancelled() {
            return Err(Error::Cancelled);
        }
        let attempt = async {
            let response = build().send().await?;
            let status = response.status();
            let headers = response.headers().clone();
            let body = response.bytes().await?;
            Ok::<_, reqwest::Error>((status, headers, body))
        };
        let outcome = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(Error::Cancelled),
            outcome = tokio::time::timeout(timeout, attempt) => outcome,
        };
        let failure = match outcome {
            Err(_elapsed) => {
                return Err(Error::Llm(format!(
                    "{label}: no answer within {}",
                    human_duration(timeout)
                )))
            }
            // A request that could not be built will not build next time either; a connection
            // refused or dropped mid-answer may well work on the next attempt.
            Ok(Err(e)) => Failure {
                message: format!("{label}: {}", error_chain(&e)),
                headers: None,
                retryable: !e.is_builder(),
            },
            Ok(Ok((status, _, body))) if status.is_success() => {
                return Ok(HttpAnswer {
                    body: body.to_vec(),
                })
            }
            Ok(Ok((status, headers, body))) => Failure {
                message: format!(
                    "{label}: HTTP {}: {}",
                    status.as_u16(),
                    error_message(&body)
                ),
                retryable: is_retryable(status, &headers),
                headers: Some(headers),
            },
        };
        if !failure.retryable || retry >= policy.max_retries {
            let suffix = if retry > 0 {
                format!(" (after {} retries)", retry)
            } else {
                String::new()
            };
            return Err(Error::Llm(format!("{}{suffix}", failure.message)));
        }
        let wait = policy.delay(retry, failure.headers.as_ref());
        tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(Error::Cancelled),
            () = tokio::time::sleep(wait) => {}
        }
        retry += 1;
    }
}

struct Failure {
    message: String,
    headers: Option<HeaderMap>,
    retryable: bool,
}

/// The human part of an error body: `error.message` (both providers use it), else the raw body.
fn error_message(body: &[u8]) -> String {
    let parsed: Option<serde_json::Value> = serde_json::from_slice(body).ok();
    let message = parsed.as_ref().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.get("message"))
            .or_else(|| v.get("error"))
            .and_then(|m| m.as_str())
            .map(str::to_owned)
    });
    match message {
        Some(m) => m,
        None if body.is_empty() => "(empty body)".to_owned(),
        None => clip(String::from_utf8_lossy(body).trim(), 300),
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

pub(crate) fn human_duration(d: Duration) -> String {
    if d.as_millis().is_multiple_of(1000) {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(*k, HeaderValue::from_str(v).expect("header"));
        }
        map
    }

    #[test]
    fn backoff_doubles_and_is_capped() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.delay(0, None), Duration::from_millis(500));
        assert_eq!(policy.delay(1, None), Duration::from_secs(1));
        assert_eq!(policy.delay(3, None), Duration::from_secs(4));
        assert_eq!(policy.delay(10, None), Duration::from_secs(8));
    }

    #[test]
    fn retry_after_wins_when_reasonable() {
        let policy = RetryPolicy::default();
        assert_eq!(
            policy.delay(0, Some(&headers(&[("retry-after", "3")]))),
            Duration::from_secs(3)
        );
        assert_eq!(
            policy.delay(0, Some(&headers(&[("retry-after-ms", "250")]))),
            Duration::from_millis(250),
            "the millisecond header is the more precise one"
        );
        assert_eq!(
            policy.delay(0, Some(&headers(&[("retry-after", "3600")]))),
            Duration::from_millis(500),
            "an hour is not worth waiting for: back off instead"
        );
        let date = chrono::Utc::now() + chrono::Duration::seconds(5);
        let wait = retry_after(&headers(&[("retry-after", &date.to_rfc2822())])).expect("date");
        assert!(
            wait > Duration::from_secs(3) && wait <= Duration::from_secs(5),
            "{wait:?}"
        );
        assert_eq!(retry_after(&headers(&[("retry-after", "soon")])), None);
    }

    #[test]
    fn which_statuses_are_retried() {
        let none = HeaderMap::new();
        for code in [408, 409, 429, 500, 502, 503, 529] {
            assert!(
                is_retryable(StatusCode::from_u16(code).expect("code"), &none),
                "{code}"
            );
        }
        for code in [400, 401, 403, 404, 422] {
            assert!(
                !is_retryable(StatusCode::from_u16(code).expect("code"), &none),
                "{code}"
            );
        }
        assert!(!is_retryable(
            StatusCode::TOO_MANY_REQUESTS,
            &headers(&[("x-should-retry", "false")])
        ));
        assert!(is_retryable(
            StatusCode::BAD_REQUEST,
            &headers(&[("x-should-retry", "true")])
        ));
    }

    #[test]
    fn error_messages_come_from_the_body() {
        assert_eq!(
            error_message(
                br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
            ),
            "Overloaded"
        );
        assert_eq!(
            error_message(br#"{"error":{"message":"model not found"}}"#),
            "model not found"
        );
        assert_eq!(
            error_message(b"<html>bad gateway</html>"),
            "<html>bad gateway</html>"
        );
        assert_eq!(error_message(b""), "(empty body)");
    }
}
