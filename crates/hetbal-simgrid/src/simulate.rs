//! The simulation itself, run inside a worker process (SimGrid allows one per
//! process): the ring platform, two actors per processor, and what they measure.
//!
//! Each processor has the two halves of its port, as the model has: a *sender*
//! actor and a *receiver* actor on its host, sharing its holdings through a
//! SimGrid semaphore (one token per item held).
//! * The sender goes through the processor's sends in the plan's order (transfers
//!   by start). Over a link without start-up a transfer is a train of items, sent
//!   one after the other: item k waits for its planned start, then for an item to
//!   hold (a token), then travels alone over the link. An item is forwarded as
//!   soon as it has arrived, before the rest of its train: this is the
//!   cut-through forwarding of the papers' model. Over a link with a start-up
//!   (docs/model.md "Start-ups") a transfer is one message, as the plan has it:
//!   it waits for its planned start, then for all its items (one token each),
//!   then travels as one SimGrid communication of all their bytes, paying the
//!   link's latency once. Either way the next send starts only when the previous
//!   one has arrived (one-port sending).
//! * The receiver takes what arrives at the processor (items of trains,
//!   messages) one at a time, in the order of their planned starts (one-port
//!   receiving), and gives a token for each item (all of a message's items when
//!   it arrives).
//!
//! So a valid plan is replayed at its planned times whenever the network gives
//! each communication of `S` bytes exactly `latency + S / bandwidth` (as
//! `oneport` does: an item of a train its cost, a message its start-up plus its
//! items' costs), and a plan that sends an item too early, or two at once, is
//! delayed or blocked; a blocked simulation is reported as a deadlock.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::ffi::{ActorCtx, Engine, FfiError, Host, Mailbox, PlatformQueries, Semaphore};
use crate::model::Setting;
use crate::replay::{ReplayError, ReplayJob, SimOutcome};

/// What the actors record while the simulation runs.
struct Record {
    /// Arrival of each transfer's last item so far.
    ends: Vec<f64>,
    /// Per actor: what it is waiting for, or `None` once it is done.
    waiting: Vec<Option<String>>,
}

/// Locks the record (never held across a SimGrid call: actors switch there).
fn record(shared: &Mutex<Record>) -> std::sync::MutexGuard<'_, Record> {
    shared.lock().unwrap_or_else(|e| e.into_inner())
}

/// One communication a sender sends: an item of a train (`items` 1, `k` its
/// number) or a whole transfer as one message (`items` all of them, `k` 0), and
/// its planned start.
#[derive(Clone, Copy)]
struct Send {
    transfer: usize,
    k: u64,
    items: u64,
    planned: f64,
}

impl Send {
    /// The communications of transfer `t` of `job`, in sending order.
    fn of_transfer(job: &ReplayJob, t: usize) -> Vec<Send> {
        let transfer = &job.transfers[t];
        if job.network.links[transfer.link].has_startup() {
            vec![Send {
                transfer: t,
                k: 0,
                items: transfer.items,
                planned: transfer.start,
            }]
        } else {
            (0..transfer.items)
                .map(|k| Send {
                    transfer: t,
                    k,
                    items: 1,
                    planned: transfer.item_start(k),
                })
                .collect()
        }
    }
}

pub(crate) fn ffi_error(e: FfiError) -> ReplayError {
    ReplayError::Worker {
        message: e.to_string(),
        stderr: String::new(),
    }
}

/// A private file for the platform, removed when dropped.
struct TempFile(PathBuf);

impl TempFile {
    fn write(text: &str) -> Result<TempFile, ReplayError> {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "hetbal-simgrid-{}-{}.xml",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::SeqCst)
        ));
        std::fs::write(&path, text).map_err(|e| ReplayError::Worker {
            message: format!("cannot write the platform file {}: {e}", path.display()),
            stderr: String::new(),
        })?;
        Ok(TempFile(path))
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Starts SimGrid with start-up options `init` and a model's settings, and loads
/// a platform text.
pub(crate) fn start_engine(
    init: &[(&str, &str)],
    model_settings: &[(&'static str, Setting)],
    platform_xml: &str,
) -> Result<Engine, ReplayError> {
    let mut engine = Engine::init("hetbal-simgrid", init).map_err(ffi_error)?;
    for &(name, value) in model_settings {
        match value {
            Setting::Text(v) => engine.set_config(name, v),
            Setting::Number(v) => engine.set_config_number(name, v),
            Setting::Bool(v) => engine.set_config_bool(name, v),
        }
        .map_err(ffi_error)?;
    }
    let file = TempFile::write(platform_xml)?;
    engine.load_platform(&file.0).map_err(ffi_error)?;
    Ok(engine)
}

/// SimGrid started on a ring platform (hosts `p0`, `p1`, …, links `l0`, `l1`, …).
pub(crate) struct RingEngine {
    /// The engine, platform loaded.
    pub engine: Engine,
    /// Host `p{i}` of processor i.
    pub hosts: Vec<Host>,
    /// One mailbox per link, named after it. Handles are Send but not Sync:
    /// every actor gets its own copy.
    pub mailboxes: Vec<Mailbox>,
}

/// Starts SimGrid on a ring platform with `processors` hosts and `links` links,
/// actors on small stacks (512 KiB; SimGrid's default is 8 MiB: rings can have
/// many processors).
pub(crate) fn start_ring(
    model_settings: &[(&'static str, Setting)],
    platform_xml: &str,
    processors: usize,
    links: usize,
) -> Result<RingEngine, ReplayError> {
    let engine = start_engine(
        &[("contexts/stack-size", "512")],
        model_settings,
        platform_xml,
    )?;
    let hosts = (0..processors)
        .map(|p| {
            engine
                .host_by_name(&format!("p{p}"))
                .map_err(ffi_error)?
                .ok_or_else(|| ReplayError::Worker {
                    message: format!("SimGrid lost host p{p} of the ring platform"),
                    stderr: String::new(),
                })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mailboxes = (0..links)
        .map(|l| engine.mailbox(&format!("l{l}")))
        .collect::<Result<_, _>>()
        .map_err(ffi_error)?;
    Ok(RingEngine {
        engine,
        hosts,
        mailboxes,
    })
}

/// Replays a job in this process. SimGrid runs one simulation per process: call
/// it once, in a worker (see [`crate::worker`]).
///
/// # Errors
/// [`ReplayError::Deadlock`] when actors are left blocked forever;
/// [`ReplayError::Worker`] when SimGrid was already used in this process.
pub fn simulate(job: &ReplayJob) -> Result<SimOutcome, ReplayError> {
    let n = job.network.processors;
    // Actors run on small stacks (KiB; SimGrid's default is 8 MiB): rings can
    // have many processors.
    let RingEngine {
        mut engine,
        hosts,
        mailboxes,
    } = start_ring(
        &job.model.settings(),
        &job.platform_xml(),
        n,
        job.network.links.len(),
    )?;

    // Each processor's sends, in the plan's order: transfers by start (then by
    // their place in the plan), items of a train one after the other.
    let mut order: Vec<usize> = (0..job.transfers.len()).collect();
    order.sort_by(|&a, &b| {
        job.transfers[a]
            .start
            .total_cmp(&job.transfers[b].start)
            .then(a.cmp(&b))
    });
    let mut sends: Vec<Vec<Send>> = vec![Vec::new(); n];
    // Per link, the communications in the order its sender sends them.
    let mut on_link: Vec<Vec<Send>> = vec![Vec::new(); job.network.links.len()];
    for &t in &order {
        let transfer = &job.transfers[t];
        for send in Send::of_transfer(job, t) {
            sends[transfer.from].push(send);
            on_link[transfer.link].push(send);
        }
    }

    let shared = Arc::new(Mutex::new(Record {
        ends: vec![f64::NAN; job.transfers.len()],
        waiting: vec![Some("not started".to_string()); 2 * n],
    }));
    let job = Arc::new(job.clone());
    for p in 0..n {
        // Incoming links and their communications in sending order.
        let incoming: Vec<(Mailbox, Vec<Send>)> = job
            .network
            .links
            .iter()
            .enumerate()
            .filter(|(_, l)| l.to == p)
            .map(|(k, _)| (mailboxes[k], std::mem::take(&mut on_link[k])))
            .filter(|(_, items)| !items.is_empty())
            .collect();
        let my_sends = std::mem::take(&mut sends[p]);
        let (sending, receiving) = (!my_sends.is_empty(), !incoming.is_empty());
        if !(sending || receiving) {
            for slot in [2 * p, 2 * p + 1] {
                record(&shared).waiting[slot] = None;
            }
            continue;
        }
        let tokens = job.loads[p].min(my_sends.iter().map(|s| s.items).sum());
        let holdings = engine.semaphore(tokens).map_err(ffi_error)?;
        if sending {
            // The sender's own links (at most two), by link number.
            let links: Vec<(usize, Mailbox)> = (0..job.network.links.len())
                .filter(|&k| job.network.links[k].from == p)
                .map(|k| (k, mailboxes[k]))
                .collect();
            let (job_s, shared_s) = (Arc::clone(&job), Arc::clone(&shared));
            engine
                .spawn_actor(&format!("P{p}-send"), hosts[p], move |ctx| {
                    sender(ctx, &job_s, &shared_s, p, &my_sends, holdings, &links)
                })
                .map_err(ffi_error)?;
        } else {
            record(&shared).waiting[2 * p] = None;
        }
        if receiving {
            let (job_r, shared_r) = (Arc::clone(&job), Arc::clone(&shared));
            engine
                .spawn_actor(&format!("P{p}-receive"), hosts[p], move |ctx| {
                    receiver(ctx, &job_r, &shared_r, p, incoming, holdings)
                })
                .map_err(ffi_error)?;
        } else {
            record(&shared).waiting[2 * p + 1] = None;
        }
    }
    let clock = engine.run();

    let record = record(&shared);
    let stuck: Vec<String> = record.waiting.iter().flatten().cloned().collect();
    if !stuck.is_empty() {
        return Err(ReplayError::Deadlock { time: clock, stuck });
    }
    Ok(SimOutcome {
        transfer_ends: record.ends.clone(),
        clock,
    })
}

fn item_name(job: &ReplayJob, s: &Send) -> String {
    let t = &job.transfers[s.transfer];
    if job.network.links[t.link].has_startup() {
        format!(
            "transfer {} ({} -> {}, its {} item(s) in one message, planned to start at {} s)",
            s.transfer, t.from, t.to, t.items, s.planned
        )
    } else {
        format!(
            "item {} of {} of transfer {} ({} -> {}, planned to start at {} s)",
            s.k + 1,
            t.items,
            s.transfer,
            t.from,
            t.to,
            s.planned
        )
    }
}

fn processor(job: &ReplayJob, p: usize) -> String {
    match job.names.get(p) {
        Some(name) if *name != format!("P{p}") => format!("P{p} ({name})"),
        _ => format!("P{p}"),
    }
}

/// The sending half of processor `p`.
fn sender(
    ctx: &ActorCtx,
    job: &ReplayJob,
    shared: &Mutex<Record>,
    p: usize,
    sends: &[Send],
    holdings: Semaphore,
    links: &[(usize, Mailbox)],
) {
    let slot = 2 * p;
    let me = processor(job, p);
    for s in sends {
        if ctx.clock() < s.planned {
            record(shared).waiting[slot] = Some(format!("{me} sleeps until {} s", s.planned));
            ctx.sleep_until(s.planned);
        }
        record(shared).waiting[slot] = Some(if s.items == 1 {
            format!(
                "{me} must send {} but holds no item and none arrives",
                item_name(job, s)
            )
        } else {
            format!(
                "{me} must send {} but does not hold its {} items and they do not all arrive",
                item_name(job, s),
                s.items
            )
        });
        for _ in 0..s.items {
            ctx.acquire(holdings);
        }
        let t = &job.transfers[s.transfer];
        record(shared).waiting[slot] = Some(format!(
            "{me} sends {}, but {} never receives it (it waits for another item first)",
            item_name(job, s),
            processor(job, t.to)
        ));
        let Some(&(_, mailbox)) = links.iter().find(|(k, _)| *k == t.link) else {
            record(shared).waiting[slot] = Some(format!("{me} has no link {}", t.link));
            return;
        };
        if let Err(e) = ctx.put(mailbox, s.items.saturating_mul(job.network.item_bytes)) {
            record(shared).waiting[slot] = Some(format!("{me}: {e}"));
            return;
        }
    }
    record(shared).waiting[slot] = None;
}

/// The incoming link whose next item (past the `taken` first ones of each link) is
/// planned first, the lower transfer first on a tie, with that item; None when
/// every link is done. `key` gives an item's planned start and transfer.
pub(crate) fn next_planned<'a, M, T>(
    incoming: &'a [(M, Vec<T>)],
    taken: &[usize],
    key: impl Fn(&T) -> (f64, usize),
) -> Option<(usize, &'a T)> {
    incoming
        .iter()
        .enumerate()
        .filter_map(|(i, (_, items))| items.get(taken[i]).map(|s| (i, s)))
        .min_by(|a, b| {
            let ((a_at, a_transfer), (b_at, b_transfer)) = (key(a.1), key(b.1));
            a_at.total_cmp(&b_at).then(a_transfer.cmp(&b_transfer))
        })
}

/// The receiving half of processor `p`: takes the communications of its incoming
/// links (items of trains, messages), one at a time, by planned start (links keep
/// their sending order).
fn receiver(
    ctx: &ActorCtx,
    job: &ReplayJob,
    shared: &Mutex<Record>,
    p: usize,
    incoming: Vec<(Mailbox, Vec<Send>)>,
    holdings: Semaphore,
) {
    let slot = 2 * p + 1;
    let me = processor(job, p);
    let mut next = vec![0usize; incoming.len()];
    while let Some((i, &s)) = next_planned(&incoming, &next, |s| (s.planned, s.transfer)) {
        record(shared).waiting[slot] = Some(format!(
            "{me} waits for {}, which never comes",
            item_name(job, &s)
        ));
        ctx.get(incoming[i].0);
        next[i] += 1;
        let now = ctx.clock();
        {
            let mut r = record(shared);
            let end = &mut r.ends[s.transfer];
            *end = if end.is_nan() { now } else { end.max(now) };
        }
        for _ in 0..s.items {
            ctx.release(holdings);
        }
    }
    record(shared).waiting[slot] = None;
}
