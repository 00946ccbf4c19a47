//! The bridge's share of a frame. Calls start while the frame's budget lasts; the rest wait for
//! the next frame in arrival order, so sixteen clients at once or one heavy read never land in
//! one frame as a hitch. At least one waiting call starts every frame, so nobody starves; a call
//! that alone costs more than the budget is counted and named in `system_control.diagnostics`,
//! and from then on its action only starts first in a frame (it runs alone), until a run of it
//! fits the budget again.
//!
//! A game that wants a frame to itself (a cutscene capture, a loading screen) sets
//! [`PauseBridgeWork`]: calls then wait, and long-running calls are not advanced.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bevy::prelude::Resource;
use serde_json::{Value, json};

use crate::runtime::mailbox::Job;

/// The default budget: 1.5 ms, a tenth of a 60 fps frame. With the one call that may run past
/// it, the bridge's time in a frame stays within 2 ms.
pub(crate) const DEFAULT_FRAME_BUDGET: Duration = Duration::from_micros(1_500);

/// Frames whose bridge time is kept for the recent percentile (two seconds at 60 fps).
const RECENT_FRAMES: usize = 120;

/// Most calls waiting for a later frame; beyond it the mailbox (64 more) pushes back, and then
/// new calls get `APP_BUSY`.
pub(crate) const MAX_WAITING: usize = 256;

/// Where the budget reads time: the real clock, or a clock a test advances by hand so that a
/// test of the budget does not depend on how fast the machine is.
#[derive(Clone, Debug, Default)]
pub enum BudgetClock {
    /// `Instant::now()`.
    #[default]
    Real,
    /// Only moves when [`ManualClock::advance`] is called.
    Manual(ManualClock),
}

impl BudgetClock {
    fn now(&self, origin: Instant) -> Duration {
        match self {
            BudgetClock::Real => origin.elapsed(),
            BudgetClock::Manual(clock) => clock.now(),
        }
    }
}

/// A clock that moves only when told to: what a test handler uses to say what it cost.
#[derive(Clone, Debug, Default)]
pub struct ManualClock(Arc<AtomicU64>);

impl ManualClock {
    /// Moves the clock forward.
    pub fn advance(&self, by: Duration) {
        let nanos = u64::try_from(by.as_nanos()).unwrap_or(u64::MAX);
        self.0.fetch_add(nanos, Ordering::Relaxed);
    }

    fn now(&self) -> Duration {
        Duration::from_nanos(self.0.load(Ordering::Relaxed))
    }
}

/// While `true`, the bridge does no work in a frame: calls wait (their deadlines still run) and
/// long-running calls are not advanced. The game sets and clears it.
#[derive(Resource, Debug, Default, Clone, Copy)]
pub struct PauseBridgeWork(pub bool);

/// The budget, the calls waiting for a later frame, and what the budget has done.
#[derive(Resource, Debug)]
pub(crate) struct FrameBudget {
    per_frame: Duration,
    clock: BudgetClock,
    origin: Instant,
    waiting: VecDeque<Job>,
    /// Actions whose last run cost more than the whole budget: they start only first in a frame.
    heavy: HashSet<(&'static str, &'static str)>,
    stats: BudgetStats,
}

/// What the budget did, for `system_control.diagnostics`.
#[derive(Debug, Default, Clone)]
struct BudgetStats {
    /// Bridge time of the most recent frames, oldest first.
    recent: VecDeque<Duration>,
    last_frame: Duration,
    /// The same in the game thread's CPU time (`None` where the platform cannot tell it).
    last_frame_cpu: Option<Duration>,
    /// The part of the last frame's bridge time spent after the calls (housekeeping), on the
    /// same two clocks.
    last_housekeeping: Duration,
    last_housekeeping_cpu: Option<Duration>,
    /// Whether the last frame was paused (it has no entry in `recent`).
    last_frame_paused: bool,
    worst_frame: Duration,
    frames_over_budget: u64,
    calls_deferred: u64,
    paused_frames: u64,
    /// The call that cost the most on its own, and what it cost.
    costliest: Option<(String, Duration)>,
    over_budget_calls: u64,
}

/// One frame's work under the budget.
#[derive(Debug)]
pub(crate) struct FrameWork {
    started: Duration,
    /// The game thread's CPU time when the frame's work began.
    cpu_started: Option<cpu_time::ThreadTime>,
    calls: usize,
}

impl FrameBudget {
    /// A budget of `per_frame`, read from `clock`.
    pub(crate) fn new(per_frame: Duration, clock: BudgetClock) -> FrameBudget {
        FrameBudget {
            per_frame,
            clock,
            origin: Instant::now(),
            waiting: VecDeque::new(),
            heavy: HashSet::new(),
            stats: BudgetStats::default(),
        }
    }

    /// How many more calls may wait.
    pub(crate) fn room(&self) -> usize {
        MAX_WAITING.saturating_sub(self.waiting.len())
    }

    /// Queues a call behind those already waiting.
    pub(crate) fn arrive(&mut self, job: Job) {
        self.waiting.push_back(job);
    }

    /// Calls waiting for a frame.
    pub(crate) fn waiting(&self) -> usize {
        self.waiting.len()
    }

    /// Records a frame the game kept to itself.
    pub(crate) fn paused(&mut self) {
        self.stats.paused_frames += 1;
        self.stats.last_frame_paused = true;
        self.stats.last_frame = Duration::ZERO;
        self.stats.last_frame_cpu = Some(Duration::ZERO);
        self.stats.last_housekeeping = Duration::ZERO;
        self.stats.last_housekeeping_cpu = Some(Duration::ZERO);
    }

    /// Starts a frame's work.
    pub(crate) fn begin(&self) -> FrameWork {
        FrameWork {
            started: self.clock.now(self.origin),
            cpu_started: cpu_time::ThreadTime::try_now().ok(),
            calls: 0,
        }
    }

    /// The next call to start, if the frame's budget allows one: always the first of a frame;
    /// after it, one whose action is known to need the whole budget waits for the next frame.
    /// Calls `held` says must wait (for a job working over the whole world) stay in line, and so
    /// does every later call of their session, so a session's calls still run in order.
    pub(crate) fn next(
        &mut self,
        work: &mut FrameWork,
        held: impl Fn(&Job) -> bool,
    ) -> Option<Job> {
        let mut waiting_sessions: Vec<&str> = Vec::new();
        let mut chosen = None;
        for (index, job) in self.waiting.iter().enumerate() {
            if waiting_sessions.contains(&job.session.as_str()) {
                continue;
            }
            if held(job) {
                waiting_sessions.push(job.session.as_str());
                continue;
            }
            chosen = Some(index);
            break;
        }
        let index = chosen?;
        if work.calls > 0 {
            let job = self.waiting.get(index)?;
            if self.spent(work) >= self.per_frame || self.heavy.contains(&job.names()) {
                return None;
            }
        }
        let job = self.waiting.remove(index)?;
        work.calls += 1;
        Some(job)
    }

    /// A mark before one call runs; [`FrameBudget::call_ran`] takes it back.
    pub(crate) fn mark(&self) -> Duration {
        self.clock.now(self.origin)
    }

    /// Notes what one call of `action` (tool, action) cost; one over the whole budget is
    /// counted, marks its action as heavy and, if the costliest yet, is named.
    pub(crate) fn call_ran(&mut self, action: (&'static str, &'static str), mark: Duration) {
        let cost = self.clock.now(self.origin).saturating_sub(mark);
        if cost > self.per_frame {
            self.stats.over_budget_calls += 1;
            self.heavy.insert(action);
        } else {
            self.heavy.remove(&action);
        }
        if self
            .stats
            .costliest
            .as_ref()
            .is_none_or(|(_, most)| cost > *most)
        {
            self.stats.costliest = Some((format!("{}.{}", action.0, action.1), cost));
        }
    }

    /// Ends a frame's work: what it cost, and how many calls wait for the next frame.
    pub(crate) fn end(&mut self, work: FrameWork) {
        let spent = self.spent(&work);
        self.stats.last_frame_paused = false;
        self.stats.last_frame = spent;
        self.stats.last_frame_cpu = work
            .cpu_started
            .and_then(|started| started.try_elapsed().ok());
        self.stats.last_housekeeping = Duration::ZERO;
        self.stats.last_housekeeping_cpu = self.stats.last_frame_cpu.map(|_| Duration::ZERO);
        if self.stats.recent.len() >= RECENT_FRAMES {
            self.stats.recent.pop_front();
        }
        self.stats.recent.push_back(spent);
        self.stats.worst_frame = self.stats.worst_frame.max(spent);
        if spent > self.per_frame {
            self.stats.frames_over_budget += 1;
        }
        self.stats.calls_deferred += self.waiting.len() as u64;
    }

    /// Adds the bridge's work after the calls in this frame (see
    /// [`crate::runtime::housekeeping`]) to the frame's bridge time.
    pub(crate) fn add_housekeeping(&mut self, wall: Duration, cpu: Option<Duration>) {
        self.stats.last_housekeeping += wall;
        self.stats.last_housekeeping_cpu = self
            .stats
            .last_housekeeping_cpu
            .map(|before| before + cpu.unwrap_or_default());
        self.stats.last_frame += wall;
        self.stats.last_frame_cpu = self
            .stats
            .last_frame_cpu
            .map(|calls| calls + cpu.unwrap_or_default());
        // A paused frame kept no entry: the newest one is an earlier frame's.
        if !self.stats.last_frame_paused
            && let Some(last) = self.stats.recent.back_mut()
        {
            *last += wall;
        }
        self.stats.worst_frame = self.stats.worst_frame.max(self.stats.last_frame);
    }

    /// The bridge's time in the last frame it worked in.
    pub(crate) fn last_frame(&self) -> Duration {
        self.stats.last_frame
    }

    /// The same in the game thread's CPU time, where the platform tells it.
    pub(crate) fn last_frame_cpu(&self) -> Option<Duration> {
        self.stats.last_frame_cpu
    }

    /// The part of [`FrameBudget::last_frame`] spent after the calls (housekeeping).
    pub(crate) fn last_housekeeping(&self) -> Duration {
        self.stats.last_housekeeping
    }

    /// The same in the game thread's CPU time, where the platform tells it.
    pub(crate) fn last_housekeeping_cpu(&self) -> Option<Duration> {
        self.stats.last_housekeeping_cpu
    }

    fn spent(&self, work: &FrameWork) -> Duration {
        self.clock.now(self.origin).saturating_sub(work.started)
    }

    /// Waiting calls that were cancelled (by their client, or by the transport at their
    /// deadline): answered now, not when their turn comes.
    pub(crate) fn drop_cancelled(&mut self) -> Vec<Job> {
        let (abandoned, kept) = std::mem::take(&mut self.waiting)
            .into_iter()
            .partition(|job: &Job| job.cancel.is_cancelled());
        self.waiting = kept;
        abandoned.into()
    }

    /// The nearest-rank 99th percentile of the bridge's time in the recent frames.
    fn recent_p99(&self) -> Duration {
        let mut recent: Vec<Duration> = self.stats.recent.iter().copied().collect();
        recent.sort();
        let rank = (recent.len() * 99).div_ceil(100).saturating_sub(1);
        recent.get(rank).copied().unwrap_or_default()
    }

    /// The budget as `system_control.diagnostics` shows it.
    pub(crate) fn to_json(&self) -> Value {
        let millis = |duration: Duration| duration.as_secs_f64() * 1000.0;
        json!({
            "budgetMs": millis(self.per_frame),
            "lastFrameMs": millis(self.stats.last_frame),
            "recentP99Ms": millis(self.recent_p99()),
            "worstFrameMs": millis(self.stats.worst_frame),
            "framesOverBudget": self.stats.frames_over_budget,
            "callsDeferred": self.stats.calls_deferred,
            "waiting": self.waiting.len(),
            "pausedFrames": self.stats.paused_frames,
            "overBudgetCalls": self.stats.over_budget_calls,
            "costliestCall": self.stats.costliest.as_ref().map(|(name, cost)| {
                json!({"action": name, "ms": millis(*cost)})
            }),
        })
    }
}
