//! Capability tokens: what each one grants (its scope), the live set a server accepts, the
//! tokens file it reloads while running, and the slowing down of wrong guesses.
//!
//! Only digests of token values are kept, so a token cannot leak through `Debug`, logs or the
//! session file, and every comparison takes the same time whatever the presented value.

mod file;
mod throttle;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mcp_vocabulary::catalog::Scope;
use parking_lot::{Mutex, RwLock};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::error::TransportError;
pub use file::{GeneratedToken, generate_token, parse_tokens, read_tokens, token_for_client};
pub(crate) use throttle::{Throttle, ThrottleSettings, ThrottleVerdict};

/// Tokens shorter than this are refused: a LAN token must not be guessable.
pub const MIN_TOKEN_CHARS: usize = 16;

/// A capability token: the digest of its value, the scope it grants, and an optional label
/// that names it in logs and the audit trail.
#[derive(Clone)]
pub struct Token {
    digest: [u8; 32],
    scope: Scope,
    label: Option<String>,
}

impl Token {
    /// Wraps a token value with scope `admin`. Leading and trailing whitespace (a newline from
    /// a file) is ignored.
    pub fn new(value: &str) -> Result<Token, TransportError> {
        let value = value.trim();
        if value.chars().count() < MIN_TOKEN_CHARS {
            return Err(TransportError::WeakToken {
                min: MIN_TOKEN_CHARS,
            });
        }
        Ok(Token {
            digest: digest(value),
            scope: Scope::Admin,
            label: None,
        })
    }

    /// The same token granting `scope` instead.
    #[must_use]
    pub fn with_scope(mut self, scope: Scope) -> Token {
        self.scope = scope;
        self
    }

    /// The same token, named `label` in logs and the audit trail.
    #[must_use]
    pub fn labelled(mut self, label: impl Into<String>) -> Token {
        self.label = Some(label.into());
        self
    }

    /// The first token of a tokens file (for tools that need one token to connect with, such
    /// as the doctor). The file's permissions are checked as the server checks them.
    pub fn from_file(path: &Path) -> Result<Token, TransportError> {
        let tokens = file::read_tokens(path)?;
        tokens
            .into_iter()
            .next()
            .ok_or_else(|| TransportError::TokensFileLine {
                path: path.to_owned(),
                line: 1,
                reason: "the file holds no token".to_owned(),
            })
    }

    /// What the token lets a session run.
    pub fn scope(&self) -> Scope {
        self.scope
    }

    /// How logs and the audit trail name the token: its label, else `tok-` and the first
    /// eight hex digits of its SHA-256 (which says nothing usable about the value).
    pub fn id(&self) -> String {
        match &self.label {
            Some(label) => label.clone(),
            None => format!("tok-{}", hex_prefix(&self.digest)),
        }
    }

    /// The digest that identifies sessions bound to this token.
    pub(crate) fn fingerprint(&self) -> [u8; 32] {
        self.digest
    }

    /// Whether `presented` is this token, in constant time.
    pub(crate) fn matches_digest(&self, presented: &[u8; 32]) -> bool {
        self.digest.ct_eq(presented).into()
    }

    fn accepted(&self) -> Accepted {
        Accepted {
            fingerprint: self.digest,
            scope: self.scope,
            id: Arc::from(self.id()),
        }
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Token(<redacted>, {}, {})", self.scope, self.id())
    }
}

/// SHA-256 of a token value.
pub(crate) fn digest(value: &str) -> [u8; 32] {
    Sha256::digest(value.as_bytes()).into()
}

fn hex_prefix(digest: &[u8; 32]) -> String {
    digest[..4]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// A token the server accepted for a request: which one (its digest), what it grants, and how
/// logs name it. A session keeps the one it started with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Accepted {
    /// SHA-256 of the token value.
    pub fingerprint: [u8; 32],
    /// What it grants.
    pub scope: Scope,
    /// Its label or fingerprint prefix.
    pub id: Arc<str>,
}

/// The tokens a running server accepts: those configured in code or the environment, and those
/// of the tokens file, which is read again whenever it changes.
#[derive(Debug)]
pub(crate) struct TokenTable {
    fixed: Vec<Token>,
    file: Option<PathBuf>,
    from_file: RwLock<Arc<[Token]>>,
    /// Digest of the file contents last looked at (applied or refused), so a change is acted
    /// on (and a refusal logged) once.
    seen: Mutex<Option<[u8; 32]>>,
}

/// What a reload of the tokens file did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Reload {
    /// The file is as it was.
    Unchanged,
    /// The new set is in use.
    Applied {
        /// Tokens of the file now.
        tokens: usize,
    },
    /// The file is unusable; the previous tokens stay.
    Refused(String),
}

impl TokenTable {
    /// The table of `fixed` tokens and those of `file`. A tokens file that cannot be used
    /// (missing, open to other users, malformed) stops the server from starting.
    pub fn new(fixed: Vec<Token>, file: Option<PathBuf>) -> Result<TokenTable, TransportError> {
        let (from_file, seen) = match &file {
            Some(path) => {
                let text = file::read_private(path)?;
                (file::parse_tokens(path, &text)?, Some(digest(&text)))
            }
            None => (Vec::new(), None),
        };
        Ok(TokenTable {
            fixed,
            file,
            from_file: RwLock::new(Arc::from(from_file)),
            seen: Mutex::new(seen),
        })
    }

    /// Whether requests must present a token: some are configured, or a tokens file is (which
    /// may be empty now and hold tokens later).
    pub fn required(&self) -> bool {
        !self.fixed.is_empty() || self.file.is_some()
    }

    /// The tokens file, when one is configured.
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// The accepted token a presented value is, if any (tests; requests digest once and call
    /// `check_digest`).
    #[cfg(test)]
    pub fn check(&self, presented: &str) -> Option<Accepted> {
        self.check_digest(&digest(presented))
    }

    /// The accepted token whose value has this digest, if any. Every token is compared, in
    /// constant time, so timing says nothing about which one matched or how close a guess came.
    pub fn check_digest(&self, presented: &[u8; 32]) -> Option<Accepted> {
        let from_file = Arc::clone(&self.from_file.read());
        let mut matched = None;
        for token in self.fixed.iter().chain(from_file.iter()) {
            if token.matches_digest(presented) && matched.is_none() {
                matched = Some(token);
            }
        }
        matched.map(Token::accepted)
    }

    /// The accepted token with this fingerprint (for sessions kept across a restart).
    pub fn by_fingerprint(&self, fingerprint: &[u8; 32]) -> Option<Accepted> {
        let from_file = Arc::clone(&self.from_file.read());
        self.fixed
            .iter()
            .chain(from_file.iter())
            .find(|token| token.fingerprint() == *fingerprint)
            .map(Token::accepted)
    }

    /// Whether a session started with `accepted` may go on: its token is still configured,
    /// with the same scope.
    pub fn still_grants(&self, accepted: &Accepted) -> bool {
        self.by_fingerprint(&accepted.fingerprint)
            .is_some_and(|now| now.scope == accepted.scope)
    }

    /// Reads the tokens file again and applies it when it changed and is usable.
    pub fn reload(&self) -> Reload {
        let Some(path) = &self.file else {
            return Reload::Unchanged;
        };
        let text = match file::read_private(path) {
            Ok(text) => text,
            Err(error) => return self.refuse_once(digest(&error.to_string()), error),
        };
        let seen = digest(&text);
        if *self.seen.lock() == Some(seen) {
            return Reload::Unchanged;
        }
        match file::parse_tokens(path, &text) {
            Ok(tokens) => {
                *self.seen.lock() = Some(seen);
                let count = tokens.len();
                *self.from_file.write() = Arc::from(tokens);
                Reload::Applied { tokens: count }
            }
            Err(error) => self.refuse_once(seen, error),
        }
    }

    /// A refusal, reported once per distinct problem (the file is polled every second).
    fn refuse_once(&self, key: [u8; 32], error: TransportError) -> Reload {
        let mut seen = self.seen.lock();
        if *seen == Some(key) {
            return Reload::Unchanged;
        }
        *seen = Some(key);
        Reload::Refused(error.to_string())
    }

    /// How many tokens grant each scope now (for the reload log line).
    pub fn counts(&self) -> [usize; 3] {
        let from_file = Arc::clone(&self.from_file.read());
        let mut counts = [0; 3];
        for token in self.fixed.iter().chain(from_file.iter()) {
            counts[token.scope as usize] += 1;
        }
        counts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(value: &str) -> Token {
        Token::new(value).unwrap_or_else(|error| panic!("{error}"))
    }

    #[test]
    fn tokens_are_redacted_and_compared_by_digest() {
        let token = token(" secret-token-value-123\n");
        let shown = format!("{token:?}");
        assert!(!shown.contains("secret"), "{shown}");
        assert!(token.matches_digest(&digest("secret-token-value-123")));
        assert!(!token.matches_digest(&digest("secret-token-value-124")));
        assert!(matches!(
            Token::new("short"),
            Err(TransportError::WeakToken { .. })
        ));
        assert!(token.id().starts_with("tok-") && token.id().len() == 12);
        assert_eq!(token.clone().labelled("qa").id(), "qa");
    }

    #[cfg(unix)]
    #[test]
    fn a_reload_applies_a_usable_file_and_keeps_the_tokens_over_a_malformed_one() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
        let path = dir.path().join("tokens");
        let write = |text: &str| {
            std::fs::write(&path, text).unwrap_or_else(|error| panic!("{error}"));
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
                .unwrap_or_else(|error| panic!("{error}"));
        };
        write("first-token-0123456789 read one\n");
        let table = TokenTable::new(Vec::new(), Some(path.clone()))
            .unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(table.reload(), Reload::Unchanged);
        write("first-token-0123456789 read one\nsecond-token-0123456789 bogus\n");
        assert!(matches!(table.reload(), Reload::Refused(reason) if reason.contains("line 2")));
        assert_eq!(
            table.reload(),
            Reload::Unchanged,
            "a refusal is reported once"
        );
        assert!(
            table.check("first-token-0123456789").is_some(),
            "the old set stays"
        );
        assert!(table.check("second-token-0123456789").is_none());
        write("second-token-0123456789 write two\n");
        assert_eq!(table.reload(), Reload::Applied { tokens: 1 });
        assert!(table.check("first-token-0123456789").is_none());
        assert_eq!(
            table
                .check("second-token-0123456789")
                .map(|found| found.scope),
            Some(Scope::Write)
        );
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644))
            .unwrap_or_else(|error| panic!("{error}"));
        assert!(matches!(table.reload(), Reload::Refused(reason) if reason.contains("chmod 600")));
        assert!(table.check("second-token-0123456789").is_some());
    }

    #[test]
    fn the_table_names_the_scope_of_the_token_presented() {
        let table = TokenTable::new(
            vec![
                token("reader-token-value-0001").with_scope(Scope::Read),
                token("admin-token-value-00001").labelled("dev"),
            ],
            None,
        )
        .unwrap_or_else(|error| panic!("{error}"));
        assert!(table.required());
        let reader = table.check("reader-token-value-0001");
        assert_eq!(reader.as_ref().map(|found| found.scope), Some(Scope::Read));
        let admin = table.check("admin-token-value-00001");
        assert_eq!(admin.as_ref().map(|found| &*found.id), Some("dev"));
        assert_eq!(table.check("reader-token-value-0002"), None);
        assert_eq!(table.counts(), [1, 0, 1]);
        let Some(reader) = reader else {
            panic!("the reader token is accepted")
        };
        assert!(table.still_grants(&reader));
        let widened = Accepted {
            scope: Scope::Admin,
            ..reader
        };
        assert!(!table.still_grants(&widened), "a scope is bound as it was");
    }
}
