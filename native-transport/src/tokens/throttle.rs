//! Slowing down wrong tokens from one address, in bounded memory, and logging them once per
//! interval instead of once per request.
//!
//! An address's first few wrong tokens cost nothing (a mistyped token is common). After that,
//! its next token is only checked once a delay has passed, doubling with each further wrong one
//! up to a ceiling, and one check at a time: a second request while one waits is answered 429
//! at once, its token unchecked. So guesses from one address come at most one per delay, however
//! many connections it opens. The right token is never refused for long: it waits at most the
//! ceiling, and a right token clears the address's record. Requests of a live session that
//! present its token pass untouched: knowing a session id and its token proves the token.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// Addresses remembered at most; past it the one whose last wrong token is oldest is forgotten.
const MAX_ADDRESSES: usize = 4096;
/// An address without a wrong token for this long is forgotten.
const FORGET_AFTER: Duration = Duration::from_secs(15 * 60);
/// Refusals of one address are logged at most once per this interval.
const LOG_INTERVAL: Duration = Duration::from_secs(60);

/// How wrong tokens are slowed down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ThrottleSettings {
    /// Wrong tokens an address may send before it is slowed down.
    pub free_attempts: u32,
    /// The delay after the first wrong token past the free ones; it doubles with each further one.
    pub first_delay: Duration,
    /// The longest delay.
    pub max_delay: Duration,
}

/// What to do with a request presenting a token.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ThrottleVerdict {
    /// Check the token now.
    CheckNow,
    /// Wait this long, then check the token (this request holds the address's one check).
    CheckAfter(Duration),
    /// Another request of the address is waiting for its check: refuse (429), retry after this.
    Busy(Duration),
}

/// What one address did lately.
#[derive(Debug)]
struct Record {
    failures: u32,
    last_failure: Instant,
    /// No token of the address is checked before this.
    next_check: Instant,
    /// A request of the address is waiting for its check.
    waiting: bool,
    /// When a refusal of the address was last logged, and how many were not logged since.
    last_logged: Option<Instant>,
    unlogged: u32,
}

/// Per-address records of wrong tokens.
#[derive(Debug)]
pub(crate) struct Throttle {
    settings: ThrottleSettings,
    records: Mutex<HashMap<IpAddr, Record>>,
}

/// A refusal worth a log line: the address, and how many refusals of it were not logged.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct LogLine {
    pub address: IpAddr,
    pub also_refused: u32,
}

impl Throttle {
    pub fn new(settings: ThrottleSettings) -> Throttle {
        Throttle {
            settings,
            records: Mutex::new(HashMap::new()),
        }
    }

    /// Whether a token from `address` may be checked now.
    pub fn before_check(&self, address: IpAddr, now: Instant) -> ThrottleVerdict {
        let key = key_of(address);
        let mut records = self.records.lock();
        let Some(record) = records.get_mut(&key) else {
            return ThrottleVerdict::CheckNow;
        };
        if record.waiting {
            let retry = record
                .next_check
                .saturating_duration_since(now)
                .max(Duration::from_secs(1));
            return ThrottleVerdict::Busy(retry);
        }
        let wait = record.next_check.saturating_duration_since(now);
        if wait.is_zero() {
            return ThrottleVerdict::CheckNow;
        }
        record.waiting = true;
        ThrottleVerdict::CheckAfter(wait)
    }

    /// Records the outcome of a check of a token from `address` (also ends its wait). Returns
    /// the log line due for a wrong token, at most one per address per interval.
    pub fn after_check(&self, address: IpAddr, right: bool, now: Instant) -> Option<LogLine> {
        let key = key_of(address);
        let mut records = self.records.lock();
        if right {
            records.remove(&key);
            return None;
        }
        if !records.contains_key(&key) && records.len() >= MAX_ADDRESSES {
            make_room(&mut records, now);
        }
        let record = records.entry(key).or_insert(Record {
            failures: 0,
            last_failure: now,
            next_check: now,
            waiting: false,
            last_logged: None,
            unlogged: 0,
        });
        record.failures = record.failures.saturating_add(1);
        record.last_failure = now;
        record.waiting = false;
        record.next_check = now + self.delay_after(record.failures);
        log_due(record, key, now)
    }

    /// Ends a wait that never reached its check (the client went away).
    pub fn abandon(&self, address: IpAddr) {
        if let Some(record) = self.records.lock().get_mut(&key_of(address)) {
            record.waiting = false;
        }
    }

    /// Whether a refusal of `address` that is not a wrong token (a missing token, a busy
    /// address) is due a log line.
    pub fn log_refusal(&self, address: IpAddr, now: Instant) -> Option<LogLine> {
        let key = key_of(address);
        let mut records = self.records.lock();
        let record = records.get_mut(&key)?;
        log_due(record, key, now)
    }

    /// The delay before the next check after `failures` wrong tokens.
    fn delay_after(&self, failures: u32) -> Duration {
        let Some(past_free) = failures.checked_sub(self.settings.free_attempts) else {
            return Duration::ZERO;
        };
        if past_free == 0 {
            return Duration::ZERO;
        }
        let doublings = (past_free - 1).min(16);
        self.settings
            .first_delay
            .saturating_mul(1 << doublings)
            .min(self.settings.max_delay)
    }

    #[cfg(test)]
    fn remembered(&self) -> usize {
        self.records.lock().len()
    }
}

/// IPv6 clients hold whole /64 networks: one of them is one address here.
fn key_of(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V4(_) => address,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let mut segments = v6.segments();
                segments[4..].fill(0);
                IpAddr::V6(segments.into())
            }
        },
    }
}

/// Forgets records idle past [`FORGET_AFTER`], else the one with the oldest wrong token.
fn make_room(records: &mut HashMap<IpAddr, Record>, now: Instant) {
    records.retain(|_, record| {
        record.waiting || now.saturating_duration_since(record.last_failure) < FORGET_AFTER
    });
    if records.len() >= MAX_ADDRESSES
        && let Some(oldest) = records
            .iter()
            .filter(|(_, record)| !record.waiting)
            .min_by_key(|(_, record)| record.last_failure)
            .map(|(address, _)| *address)
    {
        records.remove(&oldest);
    }
}

fn log_due(record: &mut Record, address: IpAddr, now: Instant) -> Option<LogLine> {
    let due = record
        .last_logged
        .is_none_or(|logged| now.saturating_duration_since(logged) >= LOG_INTERVAL);
    if !due {
        record.unlogged = record.unlogged.saturating_add(1);
        return None;
    }
    let line = LogLine {
        address,
        also_refused: record.unlogged,
    };
    record.last_logged = Some(now);
    record.unlogged = 0;
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn throttle() -> Throttle {
        Throttle::new(ThrottleSettings {
            free_attempts: 3,
            first_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(2),
        })
    }

    const HOME: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(192, 168, 1, 20));

    #[test]
    fn free_attempts_then_doubling_delays_up_to_the_ceiling() {
        let throttle = throttle();
        let start = Instant::now();
        for attempt in 0..3 {
            assert_eq!(
                throttle.before_check(HOME, start),
                ThrottleVerdict::CheckNow,
                "attempt {attempt}"
            );
            throttle.after_check(HOME, false, start);
        }
        // The fourth wrong token sets the first delay.
        throttle.after_check(HOME, false, start);
        assert_eq!(
            throttle.before_check(HOME, start),
            ThrottleVerdict::CheckAfter(Duration::from_millis(100))
        );
        // While that request waits, another one of the address is turned away unchecked.
        assert!(matches!(
            throttle.before_check(HOME, start),
            ThrottleVerdict::Busy(_)
        ));
        let mut now = start + Duration::from_millis(100);
        let mut delays = Vec::new();
        for _ in 0..8 {
            throttle.after_check(HOME, false, now);
            match throttle.before_check(HOME, now) {
                ThrottleVerdict::CheckAfter(wait) => delays.push(wait.as_millis()),
                other => panic!("{other:?}"),
            }
            now += Duration::from_secs(10);
        }
        assert_eq!(delays, [200, 400, 800, 1600, 2000, 2000, 2000, 2000]);
        // The right token clears the record.
        throttle.after_check(HOME, true, now);
        assert_eq!(throttle.before_check(HOME, now), ThrottleVerdict::CheckNow);
    }

    #[test]
    fn an_abandoned_wait_frees_the_check() {
        let throttle = throttle();
        let now = Instant::now();
        for _ in 0..4 {
            throttle.after_check(HOME, false, now);
        }
        assert!(matches!(
            throttle.before_check(HOME, now),
            ThrottleVerdict::CheckAfter(_)
        ));
        throttle.abandon(HOME);
        assert!(matches!(
            throttle.before_check(HOME, now),
            ThrottleVerdict::CheckAfter(_)
        ));
    }

    #[test]
    fn refusals_are_logged_once_per_interval_with_the_count_between() {
        let throttle = throttle();
        let start = Instant::now();
        let first = throttle.after_check(HOME, false, start);
        assert_eq!(
            first,
            Some(LogLine {
                address: HOME,
                also_refused: 0
            })
        );
        for second in 1..30 {
            let at = start + Duration::from_secs(second);
            assert_eq!(throttle.after_check(HOME, false, at), None);
        }
        let later = throttle.after_check(HOME, false, start + LOG_INTERVAL);
        assert_eq!(later.map(|line| line.also_refused), Some(29));
    }

    #[test]
    fn memory_is_bounded_and_ipv6_networks_count_once() {
        let many = throttle();
        let now = Instant::now();
        for index in 0..(MAX_ADDRESSES as u32 + 500) {
            let address = IpAddr::V4(std::net::Ipv4Addr::from(0x0A00_0000 + index));
            many.after_check(address, false, now);
        }
        assert_eq!(many.remembered(), MAX_ADDRESSES);
        let throttle = throttle();
        for host in 0..100u16 {
            let address = IpAddr::V6(std::net::Ipv6Addr::new(0x2001, 0xdb8, 0, 1, 0, 0, 0, host));
            throttle.after_check(address, false, now);
        }
        assert_eq!(throttle.remembered(), 1);
    }
}
