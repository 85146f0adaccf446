//! The crate's only `unsafe` code: the part of SimGrid's C API (SimGrid 3.32, the
//! s4u C bindings) that replays need, and safe wrappers around it.
//!
//! The rest of the crate sees [`Engine`] (the simulation, driven from the thread
//! that created it), [`ActorCtx`] (what an actor may do while the simulation runs)
//! and plain handles ([`Host`], [`Mailbox`], [`Semaphore`]) that only those two can
//! use.
//!
//! # Invariants that keep the wrappers sound
//! 1. SimGrid is initialised at most once per process ([`Engine::init`] refuses a
//!    second call) and runs one simulation ([`Engine::run`] consumes the engine).
//! 2. Every call into SimGrid is made by the thread that created the [`Engine`]
//!    (which is neither `Send` nor `Sync`) or by an actor that SimGrid is running
//!    (through its [`ActorCtx`], created by the actor entry point and handed out by
//!    reference only). SimGrid runs one actor at a time, so the process-wide actor
//!    registry below is never contended.
//! 3. Strings given to SimGrid are NUL-terminated copies ([`CString`]) that outlive
//!    the call; names holding a NUL byte are refused ([`FfiError::Nul`]). The
//!    argument vector of `simgrid_init` is leaked on purpose: SimGrid may keep it.
//! 4. Strings SimGrid returns are copied at once; arrays it allocates for the
//!    caller (`sg_host_list`, dynars) are freed exactly once, by the function that
//!    asked for them.
//! 5. Handles are pointers to objects SimGrid owns and never frees before the
//!    process ends (hosts, links, mailboxes, semaphores created here).
//! 6. Unwinding. When a simulation ends with actors still blocked (a deadlock),
//!    SimGrid kills them by unwinding their stacks with a C++ exception. Every
//!    import and the actor entry point use the `"C-unwind"` ABI, so that this
//!    unwinding through Rust frames is defined (Rust destructors run). A Rust panic
//!    must never unwind into SimGrid: the actor entry point aborts the process when
//!    one reaches it.
//! 7. SimGrid reports fatal errors (unreadable platform, unknown option) by ending
//!    the process. Simulations therefore run in a worker process
//!    ([`crate::worker`]); the parent turns such an end into an error.

#![allow(unsafe_code)]

use std::ffi::{c_char, c_int, c_long, c_ulong, c_void, CStr, CString};
use std::fmt;
use std::marker::PhantomData;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// The raw declarations, copied from SimGrid 3.32's headers (`simgrid/*.h`,
/// `xbt/config.h`, `xbt/dynar.h`). Opaque SimGrid objects are `*mut c_void`.
mod raw {
    use std::ffi::{c_char, c_int, c_long, c_ulong, c_void};

    /// `xbt_main_func_t`: the code of an actor.
    pub type ActorCode = extern "C-unwind" fn(argc: c_int, argv: *mut *mut c_char);

    extern "C-unwind" {
        // simgrid/engine.h
        pub fn simgrid_init(argc: *mut c_int, argv: *mut *mut c_char);
        pub fn simgrid_load_platform(filename: *const c_char);
        pub fn simgrid_run();
        pub fn simgrid_get_clock() -> f64;
        // xbt/config.h
        pub fn sg_cfg_set_double(name: *const c_char, value: f64);
        pub fn sg_cfg_set_boolean(name: *const c_char, value: *const c_char);
        pub fn sg_cfg_set_string(name: *const c_char, value: *const c_char);
        // simgrid/host.h
        pub fn sg_host_by_name(name: *const c_char) -> *mut c_void;
        pub fn sg_host_count() -> usize;
        pub fn sg_host_list() -> *mut *mut c_void;
        pub fn sg_host_get_name(host: *const c_void) -> *const c_char;
        pub fn sg_host_get_speed(host: *const c_void) -> f64;
        pub fn sg_host_get_route(from: *const c_void, to: *const c_void, links: *mut c_void);
        // simgrid/link.h
        pub fn sg_link_get_name(link: *const c_void) -> *const c_char;
        pub fn sg_link_get_bandwidth(link: *const c_void) -> f64;
        pub fn sg_link_get_latency(link: *const c_void) -> f64;
        pub fn sg_link_is_shared(link: *const c_void) -> c_int;
        // xbt/dynar.h
        pub fn xbt_dynar_new(
            elm_size: c_ulong,
            free_f: Option<extern "C" fn(*mut c_void)>,
        ) -> *mut c_void;
        pub fn xbt_dynar_length(dynar: *const c_void) -> c_ulong;
        pub fn xbt_dynar_get_cpy(dynar: *const c_void, idx: c_ulong, dst: *mut c_void);
        pub fn xbt_dynar_free(dynar: *mut *mut c_void);
        // simgrid/actor.h (`sg_actor_create` is an inline wrapper of this symbol)
        pub fn sg_actor_create_(
            name: *const c_char,
            host: *mut c_void,
            code: ActorCode,
            argc: c_int,
            argv: *const *const c_char,
        ) -> *mut c_void;
        pub fn sg_actor_sleep_until(wakeup_time: f64);
        pub fn sg_actor_execute(flops: f64);
        // simgrid/mailbox.h
        pub fn sg_mailbox_by_name(name: *const c_char) -> *mut c_void;
        pub fn sg_mailbox_put(mailbox: *mut c_void, payload: *mut c_void, size: c_long);
        pub fn sg_mailbox_get(mailbox: *mut c_void) -> *mut c_void;
        // simgrid/semaphore.h
        pub fn sg_sem_init(initial_value: c_int) -> *mut c_void;
        pub fn sg_sem_acquire(sem: *mut c_void);
        pub fn sg_sem_release(sem: *mut c_void);
        // libc: arrays SimGrid allocates with xbt_new
        pub fn free(ptr: *mut c_void);
    }
}

/// Why a wrapper refused a call (SimGrid itself ends the process on its errors).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FfiError {
    /// [`Engine::init`] was already called in this process.
    AlreadyInitialised,
    /// A name or value holds a NUL byte.
    Nul(String),
    /// A number does not fit SimGrid's C type.
    OutOfRange(String),
}

impl fmt::Display for FfiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FfiError::AlreadyInitialised => {
                f.write_str("SimGrid runs one simulation per process and this one already started")
            }
            FfiError::Nul(s) => write!(f, "{s:?} holds a NUL byte, which SimGrid cannot take"),
            FfiError::OutOfRange(s) => write!(f, "{s} does not fit SimGrid's C types"),
        }
    }
}

impl std::error::Error for FfiError {}

fn c_string(s: &str) -> Result<CString, FfiError> {
    CString::new(s).map_err(|_| FfiError::Nul(s.to_string()))
}

/// Copies a string SimGrid owns.
///
/// # Safety
/// `p` is null or points to a NUL-terminated string that lives during the call.
unsafe fn copy_str(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        // SAFETY: guaranteed by the caller.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

static INITIALISED: AtomicBool = AtomicBool::new(false);

/// A host of the loaded platform.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Host(*mut c_void);

/// A mailbox (a rendezvous point for messages), found by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mailbox(*mut c_void);

/// A counting semaphore of the simulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Semaphore(*mut c_void);

// SAFETY (invariants 2 and 5): the handles point to objects SimGrid keeps until the
// process ends, and only `Engine` and `ActorCtx`, which live where SimGrid runs,
// dereference them. Moving a handle into an actor's closure is all `Send` allows.
unsafe impl Send for Host {}
unsafe impl Send for Mailbox {}
unsafe impl Send for Semaphore {}

/// One link of a route, as SimGrid sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkInfo {
    /// The link's name (`ID_UP` / `ID_DOWN` for the halves of a split-duplex link).
    pub name: String,
    /// Bandwidth in bytes per second.
    pub bandwidth: f64,
    /// Latency in seconds.
    pub latency: f64,
    /// True for a SHARED link (flows share its bandwidth), false for a FATPIPE.
    pub shared: bool,
}

/// The code of an actor, waiting in the registry for SimGrid to start it.
type ActorBody = Box<dyn FnOnce(&ActorCtx) + Send>;

/// Actors created but not started yet; an actor finds its body by index.
static ACTORS: Mutex<Vec<Option<ActorBody>>> = Mutex::new(Vec::new());

/// Aborts the process if a Rust panic unwinds past it (invariant 6).
struct AbortOnPanic;

impl Drop for AbortOnPanic {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("hetbal-simgrid: a panic reached SimGrid's actor code: aborting");
            std::process::abort();
        }
    }
}

/// The entry point of every actor: runs the body registered under the index
/// passed as the actor's only argument.
extern "C-unwind" fn actor_entry(argc: c_int, argv: *mut *mut c_char) {
    let guard = AbortOnPanic;
    let index = if argc >= 1 && !argv.is_null() {
        // SAFETY: SimGrid hands back a copy of the argument vector given to
        // `sg_actor_create_`: `argc` NUL-terminated strings.
        let first = unsafe { copy_str(*argv) };
        first.parse::<usize>().ok()
    } else {
        None
    };
    let body = index.and_then(|i| {
        let mut actors = ACTORS.lock().unwrap_or_else(|e| e.into_inner());
        actors.get_mut(i).and_then(Option::take)
    });
    if let Some(body) = body {
        let ctx = ActorCtx {
            _not_send: PhantomData,
        };
        body(&ctx);
    }
    drop(guard);
}

/// The simulation: SimGrid initialised in this process, its configuration, its
/// platform and its actors. At most one per process.
///
/// # Example
/// ```no_run
/// use hetbal_simgrid::ffi::{Engine, PlatformQueries};
/// let mut engine = Engine::init("example", &[]).unwrap();
/// engine.set_config("network/model", "CM02").unwrap();
/// engine.load_platform(std::path::Path::new("platform.xml")).unwrap();
/// let host = engine.host_by_name("h0").unwrap().unwrap();
/// let mailbox = engine.mailbox("box").unwrap();
/// engine.spawn_actor("sleeper", host, move |ctx| ctx.sleep_until(1.5)).unwrap();
/// let end = engine.run();
/// assert_eq!(end, 1.5);
/// # let _ = mailbox;
/// ```
pub struct Engine {
    _not_send: PhantomData<*const ()>,
}

impl Engine {
    /// Initialises SimGrid with `program` as the program name and the
    /// configuration options `cfg` (`(name, value)`, given as `--cfg=name:value`:
    /// options read when SimGrid starts, such as `contexts/stack-size`, must be
    /// set here; setting them later with [`Engine::set_config`] crashes SimGrid
    /// 3.32). SimGrid's logs are limited to critical messages (deadlock reports),
    /// on the standard error.
    ///
    /// # Errors
    /// [`FfiError::AlreadyInitialised`] on a second call in the same process;
    /// [`FfiError::Nul`] for a name or option with a NUL byte.
    pub fn init(program: &str, cfg: &[(&str, &str)]) -> Result<Engine, FfiError> {
        let mut words = vec![program.to_string(), "--log=root.thres:critical".to_string()];
        words.extend(
            cfg.iter()
                .map(|(name, value)| format!("--cfg={name}:{value}")),
        );
        let args = words
            .iter()
            .map(|s| c_string(s))
            .collect::<Result<Vec<_>, _>>()?;
        if INITIALISED.swap(true, Ordering::SeqCst) {
            return Err(FfiError::AlreadyInitialised);
        }
        // Invariant 3: SimGrid may keep argv, so it lives until the process ends.
        let mut argv: Vec<*mut c_char> = args.into_iter().map(CString::into_raw).collect();
        let mut argc = argv.len() as c_int;
        argv.push(std::ptr::null_mut());
        let argv = Box::leak(argv.into_boxed_slice());
        // SAFETY: argc counts the NUL-terminated strings of argv, which ends with a
        // null pointer; both live for the rest of the process; first and only call.
        unsafe { raw::simgrid_init(&mut argc, argv.as_mut_ptr()) };
        Ok(Engine {
            _not_send: PhantomData,
        })
    }

    /// Sets a configuration option (`--cfg=NAME:VALUE`): SimGrid parses the value
    /// by the option's type. Options that select models must be set before
    /// [`Engine::load_platform`]; options read at start-up go to [`Engine::init`].
    ///
    /// # Errors
    /// [`FfiError::Nul`]. An unknown option or a bad value ends the process
    /// (invariant 7).
    pub fn set_config(&mut self, name: &str, value: &str) -> Result<(), FfiError> {
        let (name, value) = (c_string(name)?, c_string(value)?);
        // SAFETY: two NUL-terminated strings that outlive the call.
        unsafe { raw::sg_cfg_set_string(name.as_ptr(), value.as_ptr()) };
        Ok(())
    }

    /// Sets a numeric configuration option.
    ///
    /// # Errors
    /// [`FfiError::Nul`].
    pub fn set_config_number(&mut self, name: &str, value: f64) -> Result<(), FfiError> {
        let name = c_string(name)?;
        // SAFETY: a NUL-terminated string that outlives the call.
        unsafe { raw::sg_cfg_set_double(name.as_ptr(), value) };
        Ok(())
    }

    /// Sets a boolean configuration option.
    ///
    /// # Errors
    /// [`FfiError::Nul`].
    pub fn set_config_bool(&mut self, name: &str, value: bool) -> Result<(), FfiError> {
        let name = c_string(name)?;
        let value = if value { c"yes" } else { c"no" };
        // SAFETY: two NUL-terminated strings that outlive the call.
        unsafe { raw::sg_cfg_set_boolean(name.as_ptr(), value.as_ptr()) };
        Ok(())
    }

    /// Loads a platform file (SimGrid XML).
    ///
    /// # Errors
    /// [`FfiError::Nul`] for a path SimGrid cannot take. A file SimGrid cannot
    /// read ends the process (invariant 7).
    pub fn load_platform(&mut self, path: &Path) -> Result<(), FfiError> {
        let path = path
            .to_str()
            .ok_or_else(|| FfiError::Nul(path.display().to_string()))?;
        let path = c_string(path)?;
        // SAFETY: a NUL-terminated string that outlives the call.
        unsafe { raw::simgrid_load_platform(path.as_ptr()) };
        Ok(())
    }

    /// The mailbox named `name` (created on first use).
    ///
    /// # Errors
    /// [`FfiError::Nul`].
    pub fn mailbox(&self, name: &str) -> Result<Mailbox, FfiError> {
        let name = c_string(name)?;
        // SAFETY: a NUL-terminated string that outlives the call.
        Ok(Mailbox(unsafe { raw::sg_mailbox_by_name(name.as_ptr()) }))
    }

    /// A semaphore holding `initial` tokens.
    ///
    /// # Errors
    /// [`FfiError::OutOfRange`] when `initial` exceeds C's `int`.
    pub fn semaphore(&mut self, initial: u64) -> Result<Semaphore, FfiError> {
        let initial = c_int::try_from(initial)
            .map_err(|_| FfiError::OutOfRange(format!("a semaphore of {initial} tokens")))?;
        // SAFETY: plain value; the semaphore lives until the process ends.
        Ok(Semaphore(unsafe { raw::sg_sem_init(initial) }))
    }

    /// Creates an actor named `name` on `host`, which runs `body` once the
    /// simulation runs.
    ///
    /// # Errors
    /// [`FfiError::Nul`].
    pub fn spawn_actor(
        &mut self,
        name: &str,
        host: Host,
        body: impl FnOnce(&ActorCtx) + Send + 'static,
    ) -> Result<(), FfiError> {
        let name = c_string(name)?;
        let index = {
            let mut actors = ACTORS.lock().unwrap_or_else(|e| e.into_inner());
            actors.push(Some(Box::new(body)));
            actors.len() - 1
        };
        let arg = c_string(&index.to_string())?;
        let argv = [arg.as_ptr()];
        // SAFETY: a live host; SimGrid copies the name and the one-string argument
        // vector before returning; actor_entry has the ABI of xbt_main_func_t.
        unsafe { raw::sg_actor_create_(name.as_ptr(), host.0, actor_entry, 1, argv.as_ptr()) };
        Ok(())
    }

    /// Runs the simulation until every actor has ended or is blocked forever, and
    /// returns the simulated time then. Actors still blocked are killed by SimGrid
    /// (their Rust frames unwind, invariant 6).
    pub fn run(self) -> f64 {
        // SAFETY: called once (self is consumed), from the initialising thread.
        unsafe {
            raw::simgrid_run();
            raw::simgrid_get_clock()
        }
    }
}

/// Questions about the loaded platform, asked from the initialising thread
/// ([`Engine`]) or from an actor ([`ActorCtx`]). Routes in `Floyd` and
/// `Dijkstra` zones are known only once SimGrid has sealed the platform, which
/// the C API does when the simulation starts: ask them from an actor.
pub trait PlatformQueries: sealed::Sealed {
    /// The host named `name`, if the platform has one.
    ///
    /// # Errors
    /// [`FfiError::Nul`].
    fn host_by_name(&self, name: &str) -> Result<Option<Host>, FfiError> {
        let name = c_string(name)?;
        // SAFETY: a NUL-terminated string that outlives the call; null = no host.
        let host = unsafe { raw::sg_host_by_name(name.as_ptr()) };
        Ok((!host.is_null()).then_some(Host(host)))
    }

    /// Every host of the platform, in SimGrid's order.
    fn hosts(&self) -> Vec<Host> {
        // SAFETY: sg_host_list returns an array of sg_host_count() hosts allocated
        // with xbt_new (malloc), which we free once after copying (invariant 4).
        unsafe {
            let count = raw::sg_host_count();
            let list = raw::sg_host_list();
            if list.is_null() {
                return Vec::new();
            }
            let hosts = std::slice::from_raw_parts(list, count)
                .iter()
                .map(|&h| Host(h))
                .collect();
            raw::free(list.cast());
            hosts
        }
    }

    /// A host's name.
    fn host_name(&self, host: Host) -> String {
        // SAFETY: a live host (invariant 5); the name is copied at once.
        unsafe { copy_str(raw::sg_host_get_name(host.0)) }
    }

    /// A host's speed in flop/s (its current power state).
    fn host_speed(&self, host: Host) -> f64 {
        // SAFETY: a live host (invariant 5).
        unsafe { raw::sg_host_get_speed(host.0) }
    }

    /// The links of the route from `from` to `to`, in order.
    fn route(&self, from: Host, to: Host) -> Vec<LinkInfo> {
        let mut links = Vec::new();
        // SAFETY: a dynar of link pointers, filled by SimGrid, read element by
        // element into a local pointer of the element size, freed once (invariant
        // 4); the links are live (invariant 5) and their names copied at once.
        unsafe {
            let mut dynar = raw::xbt_dynar_new(std::mem::size_of::<*mut c_void>() as c_ulong, None);
            raw::sg_host_get_route(from.0, to.0, dynar);
            for i in 0..raw::xbt_dynar_length(dynar) {
                let mut link: *mut c_void = std::ptr::null_mut();
                raw::xbt_dynar_get_cpy(dynar, i, (&mut link as *mut *mut c_void).cast());
                if link.is_null() {
                    continue;
                }
                links.push(LinkInfo {
                    name: copy_str(raw::sg_link_get_name(link)),
                    bandwidth: raw::sg_link_get_bandwidth(link),
                    latency: raw::sg_link_get_latency(link),
                    shared: raw::sg_link_is_shared(link) != 0,
                });
            }
            raw::xbt_dynar_free(&mut dynar);
        }
        links
    }
}

impl PlatformQueries for Engine {}
impl PlatformQueries for ActorCtx {}

/// Only [`Engine`] and [`ActorCtx`] may ask (invariant 2).
mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Engine {}
    impl Sealed for super::ActorCtx {}
}

/// The payload of every message: SimGrid only carries the pointer, never reads it.
static PAYLOAD: u8 = 0;

/// What an actor may do while the simulation runs; handed by reference to the
/// actor's body only.
pub struct ActorCtx {
    _not_send: PhantomData<*const ()>,
}

impl ActorCtx {
    /// The current simulated time (seconds).
    pub fn clock(&self) -> f64 {
        // SAFETY: inside a running actor.
        unsafe { raw::simgrid_get_clock() }
    }

    /// Sleeps until simulated time `t` (returns at once if `t` is not ahead).
    pub fn sleep_until(&self, t: f64) {
        // SAFETY: inside a running actor.
        unsafe { raw::sg_actor_sleep_until(t) }
    }

    /// Computes `flops` floating-point operations on the actor's host (at its
    /// speed) and blocks until done.
    pub fn execute(&self, flops: f64) {
        // SAFETY: inside a running actor; a plain value.
        unsafe { raw::sg_actor_execute(flops) }
    }

    /// Sends a message of `bytes` bytes to `mailbox` and blocks until it has
    /// arrived.
    ///
    /// # Errors
    /// [`FfiError::OutOfRange`] when `bytes` exceeds C's `long`.
    pub fn put(&self, mailbox: Mailbox, bytes: u64) -> Result<(), FfiError> {
        let size = c_long::try_from(bytes)
            .map_err(|_| FfiError::OutOfRange(format!("a message of {bytes} bytes")))?;
        let payload = std::ptr::addr_of!(PAYLOAD).cast_mut().cast::<c_void>();
        // SAFETY: inside a running actor; a live mailbox; the payload is a static
        // byte that SimGrid never dereferences.
        unsafe { raw::sg_mailbox_put(mailbox.0, payload, size) };
        Ok(())
    }

    /// Blocks until a message arrives on `mailbox`.
    pub fn get(&self, mailbox: Mailbox) {
        // SAFETY: inside a running actor; a live mailbox; the payload is not used.
        unsafe { raw::sg_mailbox_get(mailbox.0) };
    }

    /// Takes a token from `sem`, blocking until one is there.
    pub fn acquire(&self, sem: Semaphore) {
        // SAFETY: inside a running actor; a live semaphore.
        unsafe { raw::sg_sem_acquire(sem.0) }
    }

    /// Puts a token in `sem`.
    pub fn release(&self, sem: Semaphore) {
        // SAFETY: inside a running actor; a live semaphore.
        unsafe { raw::sg_sem_release(sem.0) }
    }
}
