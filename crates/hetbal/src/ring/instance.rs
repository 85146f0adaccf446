//! Ring redistribution instances: the document of formats.md and its validation.

use std::collections::HashMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// Whether processors send only to their successor or to both neighbours.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RingKind {
    /// Every processor sends only to its successor.
    Unidirectional,
    /// Every processor may send to its successor and to its predecessor (not at once).
    Bidirectional,
}

impl fmt::Display for RingKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RingKind::Unidirectional => "unidirectional",
            RingKind::Bidirectional => "bidirectional",
        })
    }
}

/// One processor as written in an instance file (not yet validated).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProcessorSpec {
    /// Optional name; defaults to `P<index>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Items held before the redistribution (0 for a processor that holds none).
    pub load: u64,
    /// Items held after the redistribution (0 for a processor being drained).
    pub target: u64,
    /// Time to send one item to the successor (finite, > 0).
    pub c_succ: f64,
    /// Time to send one item to the predecessor (required on bidirectional rings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub c_pred: Option<f64>,
    /// Start-up time of every transfer to the successor (finite, >= 0; 0, the
    /// default, is the papers' model). Written only when non-zero.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub l_succ: f64,
    /// Start-up time of every transfer to the predecessor (finite, >= 0; default 0;
    /// used on bidirectional rings). Written only when non-zero.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub l_pred: f64,
}

/// Whether a start-up is zero, so that it is left out of documents.
fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// A ring redistribution instance as written in a file (formats.md), not yet
/// validated. Turn it into a [`RingInstance`] with [`RingInstance::from_spec`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RingInstanceSpec {
    /// The ring kind.
    pub ring: RingKind,
    /// The processors, in ring order.
    pub processors: Vec<ProcessorSpec>,
    /// True for a path: the link between the last processor and the first is
    /// forbidden, so no plan moves an item over it (a decomposition that is not
    /// periodic). Written only when true.
    #[serde(default, skip_serializing_if = "is_false")]
    pub path: bool,
}

/// Whether a flag is false, so that it is left out of documents.
fn is_false(x: &bool) -> bool {
    !*x
}

/// Why an instance is invalid. Each message names the processor (index and name),
/// the field, the bad value and the rule it breaks.
#[derive(Clone, Debug, PartialEq)]
pub enum InstanceError {
    /// A ring needs at least two processors.
    TooFewProcessors {
        /// How many processors the instance has.
        count: usize,
    },
    /// A field of one processor breaks a rule.
    InvalidField {
        /// Index of the processor (from 0).
        index: usize,
        /// Name of the processor.
        name: String,
        /// The field (`load`, `target`, `c_succ`, `c_pred`, `l_succ`, `l_pred`, `name`).
        field: &'static str,
        /// The bad value, as written or, when huge or tiny, in scientific
        /// notation.
        value: String,
        /// The rule, e.g. `must be >= 1`.
        rule: &'static str,
    },
    /// Two processors carry the same name.
    DuplicateName {
        /// Index of the second processor with that name.
        index: usize,
        /// The repeated name.
        name: String,
        /// Index of the first processor with that name.
        first: usize,
    },
    /// The loads and the targets do not add up to the same total.
    SumsDiffer {
        /// Sum of the loads.
        load_sum: u128,
        /// Sum of the targets.
        target_sum: u128,
    },
    /// The total number of items does not fit in a u64.
    TotalTooLarge {
        /// The exact total.
        total: u128,
    },
    /// On a unidirectional path items only move forward, from a processor to its
    /// successor, so the first `index + 1` processors must hold at least the items
    /// they end with.
    PathNeedsBackwardMove {
        /// The last processor of the prefix that lacks items.
        index: usize,
        /// Its name.
        name: String,
        /// Items the prefix holds before.
        held: u128,
        /// Items the prefix must hold after.
        needed: u128,
    },
}

impl fmt::Display for InstanceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InstanceError::TooFewProcessors { count } => write!(
                f,
                "a ring needs at least 2 processors, this one has {count}"
            ),
            InstanceError::InvalidField {
                index,
                name,
                field,
                value,
                rule,
            } => write!(f, "processor {index} ({name}): {field} {value} {rule}"),
            InstanceError::DuplicateName { index, name, first } => write!(
                f,
                "processor {index} ({name}): name {name:?} must be unique, processor {first} has it too"
            ),
            InstanceError::SumsDiffer {
                load_sum,
                target_sum,
            } => write!(
                f,
                "loads add up to {load_sum} but targets add up to {target_sum}: they must be equal (items are neither created nor destroyed)"
            ),
            InstanceError::TotalTooLarge { total } => write!(
                f,
                "the loads add up to {total} items, more than a u64 can count ({})",
                u64::MAX
            ),
            InstanceError::PathNeedsBackwardMove {
                index,
                name,
                held,
                needed,
            } => write!(
                f,
                "processors 0 to {index} ({name}) hold {held} items but must end with {needed}: on a unidirectional path items only move to the successor, so the missing {} cannot come from later processors (make the ring bidirectional or allow the wrap-around link)",
                needed - held
            ),
        }
    }
}

impl std::error::Error for InstanceError {}

/// A validated ring redistribution instance.
///
/// Guarantees: at least 2 processors; loads and targets add up to the same total,
/// which fits in a u64; every cost used by the ring kind is finite and > 0; every
/// start-up is finite and >= 0; names are unique; on a unidirectional path, every
/// prefix of processors holds at least the items it ends with.
///
/// A processor may hold no items (load 0) or end with none (target 0): a rank
/// being drained, or one too slow to be worth any work. The papers' model has
/// every load and target >= 1 and a wrap-around link; [`RingInstance::is_papers_model`]
/// says whether an instance is in it, and [`plan`](crate::ring::plan) schedules
/// the others with the planners that hold there.
///
/// A *path* ([`RingInstance::is_path`], `"path": true` in a document) forbids the
/// link between the last processor and the first: its flows are fixed, the
/// prefix sums `S_i` ([`prefix_sums`](crate::ring::prefix_sums)), and no plan
/// uses that link.
///
/// A transfer of m items over a link with per-item cost c and start-up l takes
/// `l + m c` (model.md, "Start-ups"): with l > 0 it is one message (all its items
/// held when it starts, all delivered when it ends); with l = 0 it is a train of
/// items, each delivered `c` after the previous one, the papers' model.
///
/// # Example
/// ```
/// use hetbal::ring::{RingInstance, RingKind};
/// //  P0 (4 items) --1.0--> P1 (1 item) --2.0--> P2 (1 item) --1.0--> P0
/// let ring = RingInstance::unidirectional(&[4, 1, 1], &[2, 2, 2], &[1.0, 2.0, 1.0]).unwrap();
/// assert_eq!(ring.len(), 3);
/// assert_eq!(ring.delta(0), 2);
/// assert_eq!(ring.total_items(), 6);
///
/// // A bad cost is refused with a message naming the processor and the rule.
/// let err = RingInstance::unidirectional(&[4, 1, 1], &[2, 2, 2], &[1.0, -1.0, 1.0]).unwrap_err();
/// assert_eq!(err.to_string(), "processor 1 (P1): c_succ -1 must be > 0");
///
/// // A drained processor and a path: P2 gives its items to P1 only, never to P0.
/// let path = RingInstance::unidirectional(&[4, 0, 2], &[3, 3, 0], &[1.0; 3])
///     .unwrap_or_else(|e| panic!("{e}"));
/// assert!(!path.is_papers_model());
/// let err = path.as_path().unwrap_err(); // P0 and P1 hold 4 but must end with 6
/// assert!(err.to_string().starts_with("processors 0 to 1 (P1) hold 4 items but must end with 6"));
///
/// // Start-ups: 0.5 s before the items of every transfer out of P0.
/// let latent = ring.with_startups(&[0.5, 0.0, 0.0], &[0.0; 3]).unwrap();
/// assert!(latent.has_startups());
/// assert_eq!(latent.l_succ(), &[0.5, 0.0, 0.0]);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct RingInstance {
    kind: RingKind,
    names: Vec<String>,
    loads: Vec<u64>,
    targets: Vec<u64>,
    c_succ: Vec<f64>,
    c_pred: Vec<Option<f64>>,
    l_succ: Vec<f64>,
    l_pred: Vec<f64>,
    has_startups: bool,
    total: u64,
    path: bool,
}

/// The rules of one processor of a document, in the order they are reported:
/// a non-empty name, its costs and start-ups.
fn check_processor(
    kind: RingKind,
    index: usize,
    name: &str,
    p: &ProcessorSpec,
) -> Result<(), InstanceError> {
    let invalid = |field, value: String, rule| InstanceError::InvalidField {
        index,
        name: name.to_string(),
        field,
        value,
        rule,
    };
    if name.is_empty() {
        return Err(invalid("name", "\"\"".into(), "must not be empty"));
    }
    check_time(index, name, "c_succ", p.c_succ, false)?;
    if kind == RingKind::Bidirectional {
        match p.c_pred {
            None => {
                return Err(invalid(
                    "c_pred",
                    "(missing)".into(),
                    "is required on a bidirectional ring",
                ))
            }
            Some(c) => check_time(index, name, "c_pred", c, false)?,
        }
    }
    check_time(index, name, "l_succ", p.l_succ, true)?;
    check_time(index, name, "l_pred", p.l_pred, true)
}

/// Checks a time of the document: a cost must be finite and > 0, a start-up
/// (`startup`) finite and >= 0.
fn check_time(
    index: usize,
    name: &str,
    field: &'static str,
    value: f64,
    startup: bool,
) -> Result<(), InstanceError> {
    let rule = if value.is_nan() {
        if startup {
            "must be a number >= 0"
        } else {
            "must be a number > 0"
        }
    } else if value.is_infinite() {
        "must be finite"
    } else if startup && value < 0.0 {
        "must be >= 0"
    } else if !startup && value <= 0.0 {
        "must be > 0"
    } else {
        return Ok(());
    };
    Err(InstanceError::InvalidField {
        index,
        name: name.to_string(),
        field,
        value: crate::shown(value),
        rule,
    })
}

/// The index `i` of a name that is the default name `P<i>` (decimal, no sign, no
/// leading zero).
fn default_index(name: &str) -> Option<usize> {
    let digits = name.strip_prefix('P')?;
    let canonical = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'));
    canonical.then(|| digits.parse().ok()).flatten()
}

/// The first name given twice, in processor order: `(index, first)` where the
/// name of processor `index` is that of the earlier processor `first`.
///
/// Names that are their processor's default `P<i>` (a document that names every
/// processor so, as hetbal writes them) are unique among themselves: only the
/// other names are hashed, each checked against the other ones and against the
/// default name it may spell. O(n) time, O(k) space for k names other than the
/// default.
fn first_duplicate(names: &[String]) -> Option<(usize, usize)> {
    let own_default = |i: usize| default_index(&names[i]) == Some(i);
    let mut others: HashMap<&str, usize> = HashMap::new();
    let mut best: Option<(usize, usize)> = None;
    let mut consider = |second: usize, first: usize| {
        if best.is_none_or(|(s, f)| second < s || (second == s && first < f)) {
            best = Some((second, first));
        }
    };
    let mut hashed_clash = false;
    for (j, name) in names.iter().enumerate() {
        if own_default(j) {
            continue;
        }
        if !hashed_clash {
            match others.get(name.as_str()) {
                // Later clashes among these names come at a later index.
                Some(&first) => {
                    consider(j, first);
                    hashed_clash = true;
                }
                None => {
                    others.insert(name, j);
                }
            }
        }
        // A name spelling the default name of another processor that has it.
        if let Some(i) = default_index(name).filter(|&i| i < names.len() && i != j) {
            if own_default(i) {
                consider(i.max(j), i.min(j));
            }
        }
    }
    // The first occurrence of the repeated name.
    best.map(|(second, _)| {
        let first = (0..second)
            .find(|&i| names[i] == names[second])
            .expect("a repeated name occurs earlier");
        (second, first)
    })
}

/// On a unidirectional path every prefix of processors must hold at least the items
/// it ends with (items only move forward). O(n).
fn check_forward_path(
    names: &[String],
    loads: &[u64],
    targets: &[u64],
) -> Result<(), InstanceError> {
    let (mut held, mut needed) = (0u128, 0u128);
    for (index, (&l, &t)) in loads.iter().zip(targets).enumerate() {
        held += u128::from(l);
        needed += u128::from(t);
        if held < needed {
            return Err(InstanceError::PathNeedsBackwardMove {
                index,
                name: names[index].clone(),
                held,
                needed,
            });
        }
    }
    Ok(())
}

impl RingInstance {
    /// Validates an instance document.
    ///
    /// Errors: the first rule broken, in processor order (see [`InstanceError`]).
    /// Complexity: O(n) expected time (names are hashed).
    pub fn from_spec(spec: RingInstanceSpec) -> Result<Self, InstanceError> {
        let n = spec.processors.len();
        if n < 2 {
            return Err(InstanceError::TooFewProcessors { count: n });
        }
        let kind = spec.ring;
        // Default names `P<index>` are unique among themselves: names are hashed only
        // when the document gives some.
        let named = spec.processors.iter().any(|p| p.name.is_some());
        let mut names = Vec::with_capacity(n);
        let mut loads = Vec::with_capacity(n);
        let mut targets = Vec::with_capacity(n);
        let mut c_succ = Vec::with_capacity(n);
        let mut c_pred = Vec::with_capacity(n);
        let mut l_succ = Vec::with_capacity(n);
        let mut l_pred = Vec::with_capacity(n);
        let (mut load_sum, mut target_sum) = (0u128, 0u128);
        // The first field that breaks its rule, in processor order, and whether it
        // is an empty name (at one processor, checked before its duplicate name).
        let mut broken: Option<(usize, InstanceError, bool)> = None;
        // -0.0 is stored as 0.0: a start-up is either zero or positive.
        let startup = |l: f64| if l == 0.0 { 0.0 } else { l };
        for (index, mut p) in spec.processors.into_iter().enumerate() {
            let name = p.name.take().unwrap_or_else(|| format!("P{index}"));
            if broken.is_none() {
                if let Err(e) = check_processor(kind, index, &name, &p) {
                    broken = Some((index, e, name.is_empty()));
                }
            }
            load_sum += u128::from(p.load);
            target_sum += u128::from(p.target);
            names.push(name);
            loads.push(p.load);
            targets.push(p.target);
            c_succ.push(p.c_succ);
            c_pred.push(p.c_pred);
            l_succ.push(startup(p.l_succ));
            l_pred.push(startup(p.l_pred));
        }
        // The first name given twice, up to the first broken field.
        let checked = broken.as_ref().map_or(n, |b| b.0 + 1);
        let duplicate = if named {
            first_duplicate(&names[..checked])
        } else {
            None
        };
        match (duplicate, broken) {
            (Some((index, first)), broken)
                if broken
                    .as_ref()
                    .is_none_or(|b| index < b.0 || (index == b.0 && !b.2)) =>
            {
                let name = names[index].clone();
                return Err(InstanceError::DuplicateName { index, name, first });
            }
            (_, Some((_, e, _))) => return Err(e),
            _ => {}
        }
        if load_sum != target_sum {
            return Err(InstanceError::SumsDiffer {
                load_sum,
                target_sum,
            });
        }
        let total = u64::try_from(load_sum)
            .map_err(|_| InstanceError::TotalTooLarge { total: load_sum })?;
        let has_startups = l_succ.iter().any(|&l| l > 0.0)
            || (kind == RingKind::Bidirectional && l_pred.iter().any(|&l| l > 0.0));
        if spec.path && kind == RingKind::Unidirectional {
            check_forward_path(&names, &loads, &targets)?;
        }
        Ok(RingInstance {
            kind,
            names,
            loads,
            targets,
            c_succ,
            c_pred,
            l_succ,
            l_pred,
            has_startups,
            total,
            path: spec.path,
        })
    }

    /// Builds and validates a unidirectional ring with default names `P0, P1, …`.
    ///
    /// Panics if the three slices differ in length. Errors as [`RingInstance::from_spec`].
    pub fn unidirectional(
        loads: &[u64],
        targets: &[u64],
        c_succ: &[f64],
    ) -> Result<Self, InstanceError> {
        assert!(loads.len() == targets.len() && loads.len() == c_succ.len());
        Self::from_spec(RingInstanceSpec {
            ring: RingKind::Unidirectional,
            processors: (0..loads.len())
                .map(|i| ProcessorSpec {
                    name: None,
                    load: loads[i],
                    target: targets[i],
                    c_succ: c_succ[i],
                    c_pred: None,
                    l_succ: 0.0,
                    l_pred: 0.0,
                })
                .collect(),
            path: false,
        })
    }

    /// Builds and validates a bidirectional ring with default names `P0, P1, …`.
    ///
    /// Panics if the slices differ in length. Errors as [`RingInstance::from_spec`].
    pub fn bidirectional(
        loads: &[u64],
        targets: &[u64],
        c_succ: &[f64],
        c_pred: &[f64],
    ) -> Result<Self, InstanceError> {
        let n = loads.len();
        assert!(targets.len() == n && c_succ.len() == n && c_pred.len() == n);
        Self::from_spec(RingInstanceSpec {
            ring: RingKind::Bidirectional,
            processors: (0..n)
                .map(|i| ProcessorSpec {
                    name: None,
                    load: loads[i],
                    target: targets[i],
                    c_succ: c_succ[i],
                    c_pred: Some(c_pred[i]),
                    l_succ: 0.0,
                    l_pred: 0.0,
                })
                .collect(),
            path: false,
        })
    }

    /// The document this instance was built from (names filled in).
    pub fn to_spec(&self) -> RingInstanceSpec {
        RingInstanceSpec {
            ring: self.kind,
            processors: (0..self.len())
                .map(|i| ProcessorSpec {
                    name: Some(self.names[i].clone()),
                    load: self.loads[i],
                    target: self.targets[i],
                    c_succ: self.c_succ[i],
                    c_pred: self.c_pred[i],
                    l_succ: self.l_succ[i],
                    l_pred: self.l_pred[i],
                })
                .collect(),
            path: self.path,
        }
    }

    /// The same processors as a path: the link from the last processor to the
    /// first (both ways on a bidirectional ring) is forbidden, and the flows are
    /// the prefix sums. Validated again.
    ///
    /// # Errors
    /// [`InstanceError::PathNeedsBackwardMove`] on a unidirectional ring whose
    /// first processors hold fewer items than they must end with.
    ///
    /// Complexity: O(n).
    ///
    /// # Example
    /// ```
    /// use hetbal::ring::{plan, RingInstance};
    /// // P0 sends 2 items to P2 through P1, which holds none.
    /// let path = RingInstance::unidirectional(&[3, 0, 1], &[1, 0, 3], &[1.0; 3])?.as_path()?;
    /// assert!(path.is_path());
    /// let plan = plan(&path, None).unwrap();
    /// assert!(plan.transfers.iter().all(|t| t.from != 2));
    /// # Ok::<(), hetbal::ring::InstanceError>(())
    /// ```
    pub fn as_path(&self) -> Result<Self, InstanceError> {
        let mut spec = self.to_spec();
        spec.path = true;
        Self::from_spec(spec)
    }

    /// True when the link from the last processor to the first is forbidden
    /// (see [`RingInstance::as_path`]).
    pub fn is_path(&self) -> bool {
        self.path
    }

    /// True when some processor holds no item or ends with none.
    pub fn has_empty_processors(&self) -> bool {
        self.loads.iter().chain(&self.targets).any(|&x| x == 0)
    }

    /// True when the instance is in the papers' model: a ring (not a path) whose
    /// every load and target is at least 1. Their planners and bounds hold there;
    /// [`plan`](crate::ring::plan) schedules other instances with the planners
    /// that hold everywhere.
    pub fn is_papers_model(&self) -> bool {
        !self.path && !self.has_empty_processors()
    }

    /// True when a send from `from` to its successor (`to_succ`) or to its
    /// predecessor would cross the link a path forbids: the last processor's link
    /// to its successor, the first one's to its predecessor. O(1).
    ///
    /// # Example
    /// ```
    /// use hetbal::ring::RingInstance;
    /// let path = RingInstance::bidirectional(&[1, 1], &[1, 1], &[1.0; 2], &[1.0; 2])?.as_path()?;
    /// assert!(path.is_missing_link(1, true) && path.is_missing_link(0, false));
    /// assert!(!path.is_missing_link(0, true) && !path.is_missing_link(1, false));
    /// # Ok::<(), hetbal::ring::InstanceError>(())
    /// ```
    pub fn is_missing_link(&self, from: usize, to_succ: bool) -> bool {
        self.path
            && if to_succ {
                from + 1 == self.len()
            } else {
                from == 0
            }
    }

    /// The same ring with other loads, their total unchanged (not validated
    /// again). O(n).
    pub(crate) fn with_loads_of_same_total(&self, loads: &[u64]) -> Self {
        debug_assert_eq!(loads.iter().sum::<u64>(), self.total);
        Self {
            loads: loads.to_vec(),
            ..self.clone()
        }
    }

    /// The same ring with other targets (validated again).
    pub fn with_targets(&self, targets: &[u64]) -> Result<Self, InstanceError> {
        let mut spec = self.to_spec();
        assert_eq!(targets.len(), spec.processors.len());
        for (p, &t) in spec.processors.iter_mut().zip(targets) {
            p.target = t;
        }
        Self::from_spec(spec)
    }

    /// The same ring with start-ups: `l_succ[i]` before the items of every transfer
    /// from i to its successor, `l_pred[i]` before those to its predecessor
    /// (ignored on unidirectional rings). Validated again.
    ///
    /// Panics if a slice's length is not the ring's. Errors as
    /// [`RingInstance::from_spec`] (a start-up must be finite and >= 0).
    ///
    /// Complexity: O(n).
    ///
    /// # Example
    /// ```
    /// use hetbal::ring::RingInstance;
    /// let ring = RingInstance::unidirectional(&[2, 1], &[1, 2], &[1.0; 2]).unwrap();
    /// let err = ring.with_startups(&[-1.0, 0.0], &[0.0; 2]).unwrap_err();
    /// assert_eq!(err.to_string(), "processor 0 (P0): l_succ -1 must be >= 0");
    /// ```
    pub fn with_startups(&self, l_succ: &[f64], l_pred: &[f64]) -> Result<Self, InstanceError> {
        let mut spec = self.to_spec();
        assert!(l_succ.len() == spec.processors.len() && l_pred.len() == spec.processors.len());
        for (p, (&s, &q)) in spec.processors.iter_mut().zip(l_succ.iter().zip(l_pred)) {
            p.l_succ = s;
            p.l_pred = q;
        }
        Self::from_spec(spec)
    }

    /// The mirror of a unidirectional ring, for the planners: the ring walked
    /// backwards with loads and targets swapped. Processor i becomes `n - 1 - i`, and
    /// link (i, i+1) becomes link (n - 2 - i, n - 1 - i) with the same cost. A
    /// schedule of the ring read backwards in time (a send at t over a link of cost c
    /// becomes a send at `T - t - c`) is a schedule of the mirror, and the other way
    /// round. The mirror has no names (it is never shown) and no start-ups. O(n).
    pub(crate) fn mirrored_unidirectional(&self) -> RingInstance {
        let n = self.len();
        let m = |i: usize| n - 1 - i;
        let mut loads = vec![0; n];
        let mut targets = vec![0; n];
        let mut c_succ = vec![0.0; n];
        for i in 0..n {
            loads[m(i)] = self.targets[i];
            targets[m(i)] = self.loads[i];
            c_succ[m((i + 1) % n)] = self.c_succ[i];
        }
        Self::bare_unidirectional(loads, targets, c_succ, self.total)
    }

    /// A unidirectional ring without names or start-ups, from vectors already
    /// checked (the same length, loads and targets adding up to `total`).
    fn bare_unidirectional(
        loads: Vec<u64>,
        targets: Vec<u64>,
        c_succ: Vec<f64>,
        total: u64,
    ) -> Self {
        let n = loads.len();
        RingInstance {
            kind: RingKind::Unidirectional,
            names: Vec::new(),
            loads,
            targets,
            c_succ,
            c_pred: vec![None; n],
            l_succ: vec![0.0; n],
            l_pred: vec![0.0; n],
            has_startups: false,
            total,
            path: false,
        }
    }

    /// A unidirectional ring for the planners' own use (the path of a segment of a
    /// bidirectional ring): the checks of [`RingInstance::from_spec`] on loads,
    /// targets, costs and sums, but no names (it is never shown) and no start-ups;
    /// `None` when a check fails. O(n), without the names' formatting and hashing.
    pub(crate) fn unnamed_unidirectional(
        loads: Vec<u64>,
        targets: Vec<u64>,
        c_succ: Vec<f64>,
    ) -> Option<RingInstance> {
        let n = loads.len();
        let valid = n >= 2
            && targets.len() == n
            && c_succ.len() == n
            && loads.iter().chain(&targets).all(|&x| x >= 1)
            && c_succ.iter().all(|&c| c.is_finite() && c > 0.0);
        let load_sum: u128 = loads.iter().map(|&x| u128::from(x)).sum();
        let target_sum: u128 = targets.iter().map(|&x| u128::from(x)).sum();
        if !valid || load_sum != target_sum {
            return None;
        }
        let total = u64::try_from(load_sum).ok()?;
        Some(Self::bare_unidirectional(loads, targets, c_succ, total))
    }

    /// Ring kind.
    pub fn kind(&self) -> RingKind {
        self.kind
    }
    /// Number of processors n (>= 2).
    pub fn len(&self) -> usize {
        self.loads.len()
    }
    /// Always false: a valid ring has at least two processors.
    pub fn is_empty(&self) -> bool {
        false
    }
    /// Name of processor `i`.
    pub fn name(&self, i: usize) -> &str {
        &self.names[i]
    }
    /// All names, in ring order.
    pub fn names(&self) -> &[String] {
        &self.names
    }
    /// Initial loads L_i.
    pub fn loads(&self) -> &[u64] {
        &self.loads
    }
    /// Targets L_i - delta_i.
    pub fn targets(&self) -> &[u64] {
        &self.targets
    }
    /// Time per item from i to succ(i).
    pub fn c_succ(&self) -> &[f64] {
        &self.c_succ
    }
    /// Time per item from i to pred(i), as given (`None` where absent; always
    /// present on bidirectional rings).
    pub fn c_pred(&self) -> &[Option<f64>] {
        &self.c_pred
    }
    /// Start-up of a transfer from i to succ(i) (0 when absent).
    pub fn l_succ(&self) -> &[f64] {
        &self.l_succ
    }
    /// Start-up of a transfer from i to pred(i) (0 when absent; used on
    /// bidirectional rings only).
    pub fn l_pred(&self) -> &[f64] {
        &self.l_pred
    }
    /// Start-up of a transfer from `from` to `to`: `l_succ[from]` when `to` is the
    /// successor of `from`, `l_pred[from]` otherwise; 0 when `from` is not a
    /// processor of the ring. O(1).
    ///
    /// # Example
    /// ```
    /// use hetbal::ring::RingInstance;
    /// let ring = RingInstance::bidirectional(&[2, 1, 1], &[1, 1, 2], &[1.0; 3], &[1.0; 3])?
    ///     .with_startups(&[0.5, 0.0, 0.0], &[0.25, 0.0, 0.0])?;
    /// assert_eq!(ring.startup(0, 1), 0.5);
    /// assert_eq!(ring.startup(0, 2), 0.25);
    /// assert_eq!(ring.startup(7, 0), 0.0);
    /// # Ok::<(), hetbal::ring::InstanceError>(())
    /// ```
    pub fn startup(&self, from: usize, to: usize) -> f64 {
        let startups = if from < self.len() && to == self.succ(from) {
            &self.l_succ
        } else {
            &self.l_pred
        };
        startups.get(from).copied().unwrap_or(0.0)
    }
    /// True when some link the ring kind uses has a start-up (then the start-up
    /// planners and bounds apply; otherwise the papers' model).
    pub fn has_startups(&self) -> bool {
        self.has_startups
    }
    /// Total number of items (fits in u64 by validation).
    pub fn total_items(&self) -> u64 {
        self.total
    }
    /// Unbalance delta_i = L_i - target_i (i128: exact for any u64 values).
    pub fn delta(&self, i: usize) -> i128 {
        i128::from(self.loads[i]) - i128::from(self.targets[i])
    }
    /// succ(i) = (i + 1) mod n.
    pub fn succ(&self, i: usize) -> usize {
        if i + 1 == self.len() {
            0
        } else {
            i + 1
        }
    }
    /// pred(i) = (i - 1) mod n.
    pub fn pred(&self, i: usize) -> usize {
        if i == 0 {
            self.len() - 1
        } else {
            i - 1
        }
    }
    /// True when every link used by the ring kind has the same cost per item
    /// (start-ups are not compared: see [`RingInstance::has_startups`]).
    pub fn is_homogeneous(&self) -> bool {
        let c = self.c_succ[0];
        self.c_succ.iter().all(|&x| x == c)
            && (self.kind == RingKind::Unidirectional || self.c_pred.iter().all(|&x| x == Some(c)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(names: &[&str], loads: &[u64]) -> RingInstanceSpec {
        RingInstanceSpec {
            ring: RingKind::Unidirectional,
            processors: names
                .iter()
                .zip(loads)
                .map(|(name, &load)| ProcessorSpec {
                    name: Some(name.to_string()),
                    load,
                    target: load,
                    // A load of 0 marks the processor whose cost is broken.
                    c_succ: if load == 0 { -1.0 } else { 1.0 },
                    c_pred: None,
                    l_succ: 0.0,
                    l_pred: 0.0,
                })
                .collect(),
            path: false,
        }
    }

    /// The first duplicate name found without hashing default names is the one
    /// hashing every name finds, on random names mixing defaults, clashes with
    /// defaults and other repeats.
    #[test]
    fn first_duplicate_matches_hashing_every_name() {
        let mut rng = crate::random::SplitMix64::new(3);
        for _ in 0..20_000 {
            let n = 1 + (rng.next_u64() % 8) as usize;
            let names: Vec<String> = (0..n)
                .map(|i| match rng.next_u64() % 5 {
                    0 | 1 => format!("P{i}"),
                    2 => format!("P{}", rng.next_u64() % 9),
                    3 => ["a", "b", "P01", "P+1"][(rng.next_u64() % 4) as usize].to_string(),
                    _ => format!("x{}", rng.next_u64() % 3),
                })
                .collect();
            let mut seen: HashMap<&str, usize> = HashMap::new();
            let mut expected = None;
            for (index, name) in names.iter().enumerate() {
                if let Some(&first) = seen.get(name.as_str()) {
                    expected = Some((index, first));
                    break;
                }
                seen.insert(name, index);
            }
            assert_eq!(first_duplicate(&names), expected, "{names:?}");
        }
    }

    /// The first rule broken in processor order is reported, and at one processor
    /// an empty name comes before its duplicate, a duplicate before its fields.
    #[test]
    fn errors_come_in_processor_order() {
        let error = |names: &[&str], loads: &[u64]| {
            RingInstance::from_spec(spec(names, loads)).unwrap_err()
        };
        // A bad cost before the duplicate.
        assert!(matches!(
            error(&["A", "B", "A"], &[1, 0, 1]),
            InstanceError::InvalidField {
                index: 1,
                field: "c_succ",
                ..
            }
        ));
        // A duplicate before the bad cost of the same processor.
        assert_eq!(
            error(&["A", "A"], &[1, 0]),
            InstanceError::DuplicateName {
                index: 1,
                name: "A".into(),
                first: 0
            }
        );
        // A duplicate before a later bad cost.
        assert!(matches!(
            error(&["A", "B", "A", "C"], &[1, 1, 1, 0]),
            InstanceError::DuplicateName {
                index: 2,
                first: 0,
                ..
            }
        ));
        // An empty name before its duplicate.
        assert!(matches!(
            error(&["", ""], &[1, 1]),
            InstanceError::InvalidField {
                index: 0,
                field: "name",
                ..
            }
        ));
        assert!(matches!(
            error(&["A", "", ""], &[1, 1, 1]),
            InstanceError::InvalidField {
                index: 1,
                field: "name",
                ..
            }
        ));
        // Default names are unique, a given one may clash with them.
        let mut clash = spec(&["P1", "x"], &[1, 1]);
        clash.processors[1].name = None;
        assert!(matches!(
            RingInstance::from_spec(clash).unwrap_err(),
            InstanceError::DuplicateName {
                index: 1,
                first: 0,
                ..
            }
        ));
        let ring = RingInstance::unidirectional(&[1, 2, 3], &[2, 2, 2], &[1.0; 3]).unwrap();
        assert_eq!(ring.names(), &["P0", "P1", "P2"]);
    }
}
