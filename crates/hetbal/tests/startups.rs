//! Rings with start-ups (model.md, "Start-ups"): the validator's message rules, the
//! start-up bounds against the exhaustive search, the start-up planners against the
//! exhaustive search and the bounds, and plans of rings beyond the transfer limit.
//!
//! - `bounds`: every bound below the exhaustive optimum on tiny rings, how often it
//!   is tight; without start-ups the port bound is System 6 / `max f c`.
//! - `chains`: items pipelined along a chain of hops end close to the bound.
//! - `retime`: today's plans timed under start-ups are valid and above the bound.

#[path = "startups/bounds.rs"]
mod bounds;
#[path = "startups/chains.rs"]
mod chains;
#[path = "startups/exhaustive.rs"]
mod exhaustive;
#[path = "startups/retime.rs"]
mod retime;
#[path = "startups/tiny.rs"]
mod tiny;
#[path = "startups/validator.rs"]
mod validator;
#[path = "startups/zero.rs"]
mod zero;
