//! Single-use consent grants for destructive actions, per session.
//!
//! # Invariants
//! - A nonce is valid for one capability (`tool.action`) at one level, and for one use.
//! - At most [`MAX_OUTSTANDING`] grants wait to be used and [`MAX_REMEMBERED_USED`] used nonces
//!   are remembered (to answer `CONSENT_REUSED`); the oldest go first.

use std::collections::VecDeque;

use serde_json::{Value, json};

use crate::catalog::Consent;

/// Grants issued and not yet used, per session.
pub const MAX_OUTSTANDING: usize = 16;
/// Used nonces remembered, per session.
pub const MAX_REMEMBERED_USED: usize = 64;

/// One session's consent grants.
#[derive(Debug, Default)]
pub struct ConsentLedger {
    outstanding: VecDeque<Grant>,
    used: VecDeque<String>,
}

#[derive(Debug, Clone)]
struct Grant {
    capability: String,
    level: Consent,
    nonce: String,
}

/// Why presented consent was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConsentRefusal {
    /// No consent was sent.
    Missing,
    /// The nonce was already used.
    Reused,
    /// The nonce is unknown, or was issued for another capability or level.
    Invalid(String),
}

impl ConsentLedger {
    /// Issues a fresh grant for `tool.action` at `level` and returns it as JSON.
    pub fn issue(&mut self, tool: &str, action: &str, level: Consent) -> Value {
        if self.outstanding.len() >= MAX_OUTSTANDING {
            self.outstanding.pop_front();
        }
        let grant = Grant {
            capability: format!("{tool}.{action}"),
            level,
            nonce: fresh_nonce(),
        };
        let value = json!({
            "capability": grant.capability,
            "acknowledge": level.as_str(),
            "nonce": grant.nonce,
        });
        self.outstanding.push_back(grant);
        value
    }

    /// Checks and consumes the consent sent with a call of `tool.action` needing `level`.
    pub fn redeem(
        &mut self,
        tool: &str,
        action: &str,
        level: Consent,
        consent: Option<&Value>,
    ) -> Result<(), ConsentRefusal> {
        let Some(consent) = consent else {
            return Err(ConsentRefusal::Missing);
        };
        let field = |key: &str| consent.get(key).and_then(Value::as_str).unwrap_or_default();
        let nonce = field("nonce");
        if self.used.iter().any(|used| used == nonce) {
            return Err(ConsentRefusal::Reused);
        }
        let capability = format!("{tool}.{action}");
        let Some(position) = self
            .outstanding
            .iter()
            .position(|grant| grant.nonce == nonce)
        else {
            return Err(ConsentRefusal::Invalid(
                "the nonce was not issued by this session".to_owned(),
            ));
        };
        let grant = &self.outstanding[position];
        if grant.capability != capability {
            return Err(ConsentRefusal::Invalid(format!(
                "the grant is for {}, not {capability}",
                grant.capability
            )));
        }
        if grant.level != level
            || field("capability") != capability
            || field("acknowledge") != level.as_str()
        {
            return Err(ConsentRefusal::Invalid(format!(
                "send the grant unchanged: capability {capability}, acknowledge {}",
                level.as_str()
            )));
        }
        self.outstanding.remove(position);
        if self.used.len() >= MAX_REMEMBERED_USED {
            self.used.pop_front();
        }
        self.used.push_back(nonce.to_owned());
        Ok(())
    }
}

/// 128 random bits as hex.
fn fresh_nonce() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // No OS randomness: fall back to a v4 UUID's bits (uuid has its own source).
        bytes = *uuid::Uuid::new_v4().as_bytes();
    }
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_are_single_use_and_bound_to_their_capability() {
        let mut ledger = ConsentLedger::default();
        assert_eq!(
            ledger.redeem("t", "a", Consent::Explicit, None),
            Err(ConsentRefusal::Missing)
        );
        let grant = ledger.issue("t", "a", Consent::Explicit);
        assert!(matches!(
            ledger.redeem("t", "b", Consent::Explicit, Some(&grant)),
            Err(ConsentRefusal::Invalid(_))
        ));
        assert_eq!(
            ledger.redeem("t", "a", Consent::Explicit, Some(&grant)),
            Ok(())
        );
        assert_eq!(
            ledger.redeem("t", "a", Consent::Explicit, Some(&grant)),
            Err(ConsentRefusal::Reused)
        );
    }

    #[test]
    fn acknowledgement_must_match_the_level() {
        let mut ledger = ConsentLedger::default();
        let mut grant = ledger.issue("control_app", "exit", Consent::Elevated);
        grant["acknowledge"] = json!("explicit");
        assert!(matches!(
            ledger.redeem("control_app", "exit", Consent::Elevated, Some(&grant)),
            Err(ConsentRefusal::Invalid(_))
        ));
        let forged =
            json!({"capability": "control_app.exit", "acknowledge": "elevated", "nonce": "00"});
        assert!(matches!(
            ledger.redeem("control_app", "exit", Consent::Elevated, Some(&forged)),
            Err(ConsentRefusal::Invalid(_))
        ));
    }

    #[test]
    fn the_ledger_is_bounded() {
        let mut ledger = ConsentLedger::default();
        let first = ledger.issue("t", "a", Consent::Explicit);
        for _ in 0..MAX_OUTSTANDING {
            ledger.issue("t", "a", Consent::Explicit);
        }
        assert!(ledger.outstanding.len() <= MAX_OUTSTANDING);
        assert!(
            matches!(
                ledger.redeem("t", "a", Consent::Explicit, Some(&first)),
                Err(ConsentRefusal::Invalid(_))
            ),
            "the oldest grant was dropped"
        );
        for _ in 0..(MAX_REMEMBERED_USED + 5) {
            let grant = ledger.issue("t", "a", Consent::Explicit);
            assert_eq!(
                ledger.redeem("t", "a", Consent::Explicit, Some(&grant)),
                Ok(())
            );
        }
        assert!(ledger.used.len() <= MAX_REMEMBERED_USED);
    }
}
