//! Scatter instances: the document of formats.md ("Scatter instance"), its costs and
//! its validation.

use std::collections::HashMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// When a processor pays the startup of an affine cost.
///
/// Tabulated costs carry their own value at 0 items (always 0), so the rule only
/// changes affine costs.
///
/// # Example
/// ```
/// use hetbal::scatter::StartupRule;
/// assert_eq!(StartupRule::default(), StartupRule::WhenUsed);
/// assert_eq!(StartupRule::Always.name(), "always");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StartupRule {
    /// A startup is paid only by a processor that gets at least one item (the
    /// paper's dynamic programme). The default.
    #[default]
    WhenUsed,
    /// Every startup is paid, items or not (the paper's linear programme).
    Always,
}

impl StartupRule {
    /// The name used in files and reports: `when_used` or `always`.
    pub fn name(self) -> &'static str {
        match self {
            StartupRule::WhenUsed => "when_used",
            StartupRule::Always => "always",
        }
    }
}

impl fmt::Display for StartupRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A cost function as written in an instance file (not yet validated): affine
/// (`per_item`, optional `startup`, default 0) or tabulated (`table`).
///
/// # Example
/// ```
/// use hetbal::scatter::CostSpec;
/// let c: CostSpec = serde_json::from_str(r#"{"per_item": 0.5}"#).unwrap();
/// assert_eq!(c, CostSpec { per_item: Some(0.5), startup: None, table: None });
/// assert_eq!(CostSpec::table(vec![0.0, 1.0]).table, Some(vec![0.0, 1.0]));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CostSpec {
    /// Seconds per item of an affine cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_item: Option<f64>,
    /// Seconds paid once by an affine cost (see [`StartupRule`]); 0 when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup: Option<f64>,
    /// `t(0), t(1), …, t(items)`: seconds for each number of items.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<Vec<f64>>,
}

impl CostSpec {
    /// An affine cost.
    pub fn affine(per_item: f64, startup: f64) -> Self {
        CostSpec {
            per_item: Some(per_item),
            startup: Some(startup),
            table: None,
        }
    }

    /// A tabulated cost.
    pub fn table(table: Vec<f64>) -> Self {
        CostSpec {
            per_item: None,
            startup: None,
            table: Some(table),
        }
    }
}

/// One processor as written in an instance file (not yet validated).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProcessorSpec {
    /// Optional name; defaults to `P<index>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Time for the root to send x items to this processor.
    pub comm: CostSpec,
    /// Time for this processor to process x items.
    pub comp: CostSpec,
}

/// A scatter instance as written in a file (formats.md, "Scatter instance"), not yet
/// validated. Turn it into a [`ScatterInstance`] with [`ScatterInstance::from_spec`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScatterInstanceSpec {
    /// Number of items N to scatter.
    pub items: u64,
    /// Name of the processor that holds the items and scatters them.
    pub root: String,
    /// When startups are paid; `when_used` when left out.
    #[serde(default)]
    pub startup_rule: StartupRule,
    /// The processors, root included, in file order.
    pub processors: Vec<ProcessorSpec>,
}

/// A validated cost function of x items, non-decreasing, in seconds.
#[derive(Clone, Debug, PartialEq)]
pub enum Cost {
    /// `startup + per_item * x` for x > 0; at x = 0, 0 under
    /// [`StartupRule::WhenUsed`] and `startup` under [`StartupRule::Always`].
    Affine {
        /// Seconds per item (finite, >= 0).
        per_item: f64,
        /// Seconds paid once (finite, >= 0).
        startup: f64,
    },
    /// `t(x)` read from the table `t(0) = 0 <= t(1) <= … <= t(N)` (finite).
    Table(Vec<f64>),
}

impl Cost {
    /// The time of `x` items under `rule`.
    ///
    /// Affine costs compute `startup + per_item * x` in f64 (x as f64 is exact up to
    /// 2^53); every time hetbal reports is built from this one expression.
    ///
    /// Panics if the cost is a table and `x` is beyond its last entry (the instance
    /// guarantees `x <= items` is inside).
    ///
    /// Complexity: O(1).
    ///
    /// # Example
    /// ```
    /// use hetbal::scatter::{Cost, StartupRule};
    /// let c = Cost::Affine { per_item: 0.5, startup: 2.0 };
    /// assert_eq!(c.time(4, StartupRule::WhenUsed), 4.0);
    /// assert_eq!(c.time(0, StartupRule::WhenUsed), 0.0);
    /// assert_eq!(c.time(0, StartupRule::Always), 2.0);
    /// assert_eq!(Cost::Table(vec![0.0, 1.0, 1.5]).time(2, StartupRule::Always), 1.5);
    /// ```
    pub fn time(&self, x: u64, rule: StartupRule) -> f64 {
        match self {
            Cost::Affine { per_item, startup } => {
                if x == 0 && rule == StartupRule::WhenUsed {
                    0.0
                } else {
                    startup + per_item * x as f64
                }
            }
            Cost::Table(t) => t[usize::try_from(x).expect("x is inside the table")],
        }
    }

    /// True when the cost is 0 for every number of items.
    pub fn is_zero(&self) -> bool {
        match self {
            Cost::Affine { per_item, startup } => *per_item == 0.0 && *startup == 0.0,
            Cost::Table(t) => t.iter().all(|&x| x == 0.0),
        }
    }

    /// The time per item that orders processors by bandwidth: `per_item` of an affine
    /// cost, `t(N) / N` of a table (0 when N = 0).
    pub fn rate(&self) -> f64 {
        match self {
            Cost::Affine { per_item, .. } => *per_item,
            Cost::Table(t) => {
                let n = t.len() - 1;
                if n == 0 {
                    0.0
                } else {
                    t[n] / n as f64
                }
            }
        }
    }

    /// The startup of an affine cost, `t(1)` of a table (0 when it has no entry 1).
    pub fn first_item(&self) -> f64 {
        match self {
            Cost::Affine { startup, .. } => *startup,
            Cost::Table(t) => t.get(1).copied().unwrap_or(0.0),
        }
    }

    /// The written form of this cost.
    pub fn to_spec(&self) -> CostSpec {
        match self {
            Cost::Affine { per_item, startup } => CostSpec::affine(*per_item, *startup),
            Cost::Table(t) => CostSpec::table(t.clone()),
        }
    }
}

/// Why an instance is invalid. Each message names the processor (index and name),
/// the cost, the field, the bad value and the rule it breaks.
#[derive(Clone, Debug, PartialEq)]
pub enum InstanceError {
    /// No processor at all (a scatter needs at least its root).
    NoProcessors,
    /// A name is empty.
    EmptyName {
        /// Index of the processor.
        index: usize,
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
    /// A number of a cost breaks a rule (`per_item`, `startup` or a table entry).
    InvalidNumber {
        /// Index of the processor.
        index: usize,
        /// Name of the processor.
        name: String,
        /// `comm` or `comp`.
        cost: &'static str,
        /// The field, e.g. `per_item` or `table t(5)`.
        field: String,
        /// The value, as written or, when huge or tiny, in scientific notation.
        value: String,
        /// The rule, e.g. `must be >= 0`.
        rule: &'static str,
    },
    /// A cost is neither affine nor a table, or mixes both.
    CostShape {
        /// Index of the processor.
        index: usize,
        /// Name of the processor.
        name: String,
        /// `comm` or `comp`.
        cost: &'static str,
        /// What is wrong and what to write instead.
        problem: &'static str,
    },
    /// A table does not hold `items + 1` entries.
    TableLength {
        /// Index of the processor.
        index: usize,
        /// Name of the processor.
        name: String,
        /// `comm` or `comp`.
        cost: &'static str,
        /// Entries given.
        len: usize,
        /// The instance's number of items.
        items: u64,
    },
    /// A table decreases somewhere.
    TableDecreasing {
        /// Index of the processor.
        index: usize,
        /// Name of the processor.
        name: String,
        /// `comm` or `comp`.
        cost: &'static str,
        /// The number of items x at which `t(x) < t(x-1)`.
        at: usize,
        /// `t(x-1)`.
        before: f64,
        /// `t(x)`.
        value: f64,
    },
    /// `root` names no processor.
    UnknownRoot {
        /// The name given.
        root: String,
        /// The processors' names.
        names: Vec<String>,
    },
    /// The root's `comm` is not zero (it keeps its share without sending it).
    RootCommNotZero {
        /// Index of the root.
        index: usize,
        /// Name of the root.
        name: String,
        /// The cost given, described.
        given: String,
    },
}

impl fmt::Display for InstanceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InstanceError::NoProcessors => {
                f.write_str("a scatter needs at least 1 processor (its root), this one has 0")
            }
            InstanceError::EmptyName { index } => {
                write!(f, "processor {index}: name \"\" must not be empty")
            }
            InstanceError::DuplicateName { index, name, first } => write!(
                f,
                "processor {index} ({name}): name {name:?} must be unique, processor {first} has it too"
            ),
            InstanceError::InvalidNumber {
                index,
                name,
                cost,
                field,
                value,
                rule,
            } => write!(f, "processor {index} ({name}): {cost} {field} {value} {rule}"),
            InstanceError::CostShape {
                index,
                name,
                cost,
                problem,
            } => write!(f, "processor {index} ({name}): {cost} {problem}"),
            InstanceError::TableLength {
                index,
                name,
                cost,
                len,
                items,
            } => write!(
                f,
                "processor {index} ({name}): {cost} table has {len} entries but items is {items}: give t(0) to t({items}), {} entries",
                u128::from(*items) + 1
            ),
            InstanceError::TableDecreasing {
                index,
                name,
                cost,
                at,
                before,
                value,
            } => write!(
                f,
                "processor {index} ({name}): {cost} table must be non-decreasing at {at} items (t({}) = {before} > t({at}) = {value})",
                at - 1
            ),
            InstanceError::UnknownRoot { root, names } => {
                let shown: Vec<&str> = names.iter().take(8).map(String::as_str).collect();
                write!(
                    f,
                    "root {root:?} is not one of the processors ({}{})",
                    shown.join(", "),
                    if names.len() > 8 { ", …" } else { "" }
                )
            }
            InstanceError::RootCommNotZero { index, name, given } => write!(
                f,
                "processor {index} ({name}): comm must be zero for the root (it keeps its share without sending it), got {given}"
            ),
        }
    }
}

impl std::error::Error for InstanceError {}

/// A validated scatter instance: N items on a root, p processors (root included)
/// with their communication and computation costs, and the startup rule.
///
/// Guarantees: at least one processor; unique non-empty names; the root is a
/// processor and its `comm` is zero; every affine number is finite and >= 0; every
/// table has `items + 1` finite entries, starts at 0 and never decreases; every
/// communication of all the items plus the longest computation of all of them
/// is finite (no plan's time overflows).
///
/// # Example
/// ```
/// use hetbal::scatter::{ScatterInstance, StartupRule};
/// // P0 and P1 get their items from the root P2 (comm), then process them (comp).
/// let s = ScatterInstance::affine(
///     10, 2, &[(1.0, 0.0), (2.0, 0.5), (0.0, 0.0)], &[(3.0, 0.0), (3.0, 0.0), (4.0, 0.0)],
///     StartupRule::WhenUsed,
/// ).unwrap();
/// assert_eq!((s.len(), s.items(), s.root()), (3, 10, 2));
/// assert_eq!(s.comm_time(1, 2), 4.5);
///
/// // A root that pays to send to itself is refused, with the rule.
/// let err = ScatterInstance::affine(
///     10, 1, &[(1.0, 0.0), (0.1, 0.0)], &[(3.0, 0.0), (3.0, 0.0)], StartupRule::WhenUsed,
/// ).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "processor 1 (P1): comm must be zero for the root (it keeps its share without sending it), got per_item 0.1, startup 0"
/// );
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ScatterInstance {
    items: u64,
    root: usize,
    rule: StartupRule,
    names: Vec<String>,
    comm: Vec<Cost>,
    comp: Vec<Cost>,
}

/// Validates one cost of processor `index`.
fn check_cost(
    index: usize,
    name: &str,
    cost: &'static str,
    spec: &CostSpec,
    items: u64,
) -> Result<Cost, InstanceError> {
    let shape = |problem| InstanceError::CostShape {
        index,
        name: name.to_string(),
        cost,
        problem,
    };
    let number = |field: String, value: f64| -> Result<(), InstanceError> {
        let rule = if value.is_nan() {
            "must be a number >= 0"
        } else if value.is_infinite() {
            "must be finite"
        } else if value < 0.0 {
            "must be >= 0"
        } else {
            return Ok(());
        };
        Err(InstanceError::InvalidNumber {
            index,
            name: name.to_string(),
            cost,
            field,
            value: crate::shown(value),
            rule,
        })
    };
    match (&spec.table, spec.per_item) {
        (Some(_), Some(_)) => Err(shape(
            "gives both `table` and `per_item`: give one of them (affine or tabulated)",
        )),
        (Some(_), None) if spec.startup.is_some() => Err(shape(
            "gives `startup` with `table`: a table holds its own startup (t(1) - t(0))",
        )),
        (None, None) => Err(shape(
            "needs `per_item` (with an optional `startup`) or a `table` of t(0), …, t(items)",
        )),
        (None, Some(per_item)) => {
            let startup = spec.startup.unwrap_or(0.0);
            number("per_item".into(), per_item)?;
            number("startup".into(), startup)?;
            Ok(Cost::Affine { per_item, startup })
        }
        (Some(table), None) => {
            if table.len() as u128 != u128::from(items) + 1 {
                return Err(InstanceError::TableLength {
                    index,
                    name: name.to_string(),
                    cost,
                    len: table.len(),
                    items,
                });
            }
            for (x, &t) in table.iter().enumerate() {
                number(format!("table t({x})"), t)?;
            }
            if table[0] != 0.0 {
                return Err(InstanceError::InvalidNumber {
                    index,
                    name: name.to_string(),
                    cost,
                    field: "table t(0)".into(),
                    value: format!("{}", table[0]),
                    rule: "must be 0 (no items take no time)",
                });
            }
            if let Some(at) = (1..table.len()).find(|&x| table[x] < table[x - 1]) {
                return Err(InstanceError::TableDecreasing {
                    index,
                    name: name.to_string(),
                    cost,
                    at,
                    before: table[at - 1],
                    value: table[at],
                });
            }
            Ok(Cost::Table(table.clone()))
        }
    }
}

/// Refuses costs whose times can overflow f64 in a plan. A processor ends
/// once the shares sent before its own, its own and its computation are
/// done, so no plan's time exceeds every communication of all the items plus
/// the longest computation of all of them: that sum must be finite. The
/// error names the processor with the largest such time (its communication
/// when theirs overflow, else its computation).
fn too_large(
    names: &[String],
    comm: &[Cost],
    comp: &[Cost],
    items: u64,
) -> Result<(), InstanceError> {
    let all = |c: &Cost| c.time(items, StartupRule::Always);
    // The first of the largest.
    let largest = |costs: &[Cost]| {
        (0..costs.len()).fold(0, |best, i| {
            if all(&costs[i]) > all(&costs[best]) {
                i
            } else {
                best
            }
        })
    };
    let sent: f64 = comm.iter().map(all).sum();
    let computed = comp.iter().map(all).fold(0.0, f64::max);
    if (sent + computed).is_finite() {
        return Ok(());
    }
    let (cost, index, which) = if !sent.is_finite() {
        let i = largest(comm);
        ("comm", i, &comm[i])
    } else {
        let i = largest(comp);
        ("comp", i, &comp[i])
    };
    let (field, value) = match which {
        Cost::Affine { per_item, startup } if *startup > per_item * items as f64 => {
            ("startup".to_string(), *startup)
        }
        Cost::Affine { per_item, .. } => ("per_item".to_string(), *per_item),
        Cost::Table(t) => (format!("table t({items})"), t[t.len() - 1]),
    };
    Err(InstanceError::InvalidNumber {
        index,
        name: names[index].clone(),
        cost,
        field,
        value: crate::shown(value),
        rule: "is too large: the times of a plan of all the items would overflow a 64-bit float; measure time in a larger unit, so that the costs are smaller numbers",
    })
}

/// Describes a cost for messages: `per_item 0.1, startup 0` or `a table`.
fn describe(cost: &Cost) -> String {
    match cost {
        Cost::Affine { per_item, startup } => format!("per_item {per_item}, startup {startup}"),
        Cost::Table(t) => match t.iter().position(|&x| x != 0.0) {
            Some(x) => format!("a table with t({x}) = {}", t[x]),
            None => "a zero table".into(),
        },
    }
}

impl ScatterInstance {
    /// Validates an instance document.
    ///
    /// # Errors
    /// The first rule broken, in processor order, then the root (see
    /// [`InstanceError`]).
    ///
    /// # Complexity
    /// O(p + total table length) expected time (names are hashed).
    ///
    /// # Example
    /// ```
    /// use hetbal::scatter::{CostSpec, ProcessorSpec, ScatterInstance, ScatterInstanceSpec, StartupRule};
    /// let spec = ScatterInstanceSpec {
    ///     items: 2,
    ///     root: "r".into(),
    ///     startup_rule: StartupRule::WhenUsed,
    ///     processors: vec![
    ///         ProcessorSpec { name: Some("w".into()), comm: CostSpec::affine(1.0, 0.0),
    ///                         comp: CostSpec::table(vec![0.0, 3.0, 2.0]) },
    ///         ProcessorSpec { name: Some("r".into()), comm: CostSpec::affine(0.0, 0.0),
    ///                         comp: CostSpec::affine(1.0, 0.0) },
    ///     ],
    /// };
    /// let err = ScatterInstance::from_spec(spec).unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "processor 0 (w): comp table must be non-decreasing at 2 items (t(1) = 3 > t(2) = 2)"
    /// );
    /// ```
    pub fn from_spec(spec: ScatterInstanceSpec) -> Result<Self, InstanceError> {
        if spec.processors.is_empty() {
            return Err(InstanceError::NoProcessors);
        }
        let n = spec.processors.len();
        let mut names = Vec::with_capacity(n);
        let mut seen: HashMap<&str, usize> = HashMap::with_capacity(n);
        let mut comm = Vec::with_capacity(n);
        let mut comp = Vec::with_capacity(n);
        let default_names: Vec<String> = (0..n).map(|i| format!("P{i}")).collect();
        for (index, p) in spec.processors.iter().enumerate() {
            let name: &str = p.name.as_deref().unwrap_or(&default_names[index]);
            if name.is_empty() {
                return Err(InstanceError::EmptyName { index });
            }
            if let Some(&first) = seen.get(name) {
                return Err(InstanceError::DuplicateName {
                    index,
                    name: name.to_string(),
                    first,
                });
            }
            seen.insert(name, index);
            comm.push(check_cost(index, name, "comm", &p.comm, spec.items)?);
            comp.push(check_cost(index, name, "comp", &p.comp, spec.items)?);
            names.push(name.to_string());
        }
        let root = match seen.get(spec.root.as_str()) {
            Some(&r) => r,
            None => {
                return Err(InstanceError::UnknownRoot {
                    root: spec.root,
                    names,
                })
            }
        };
        too_large(&names, &comm, &comp, spec.items)?;
        if !comm[root].is_zero() {
            return Err(InstanceError::RootCommNotZero {
                index: root,
                name: names[root].clone(),
                given: describe(&comm[root]),
            });
        }
        Ok(ScatterInstance {
            items: spec.items,
            root,
            rule: spec.startup_rule,
            names,
            comm,
            comp,
        })
    }

    /// Builds and validates an instance of affine costs `(per_item, startup)`, with
    /// default names `P0, P1, …`; `root` is an index.
    ///
    /// Panics if `comm` and `comp` differ in length. Errors as
    /// [`ScatterInstance::from_spec`]. Complexity: O(p).
    ///
    /// # Example
    /// ```
    /// use hetbal::scatter::{ScatterInstance, StartupRule};
    /// let s = ScatterInstance::affine(4, 1, &[(0.5, 2.0), (0.0, 0.0)], &[(1.0, 0.0), (1.0, 0.0)],
    ///                                 StartupRule::Always).unwrap();
    /// assert_eq!(s.comm_time(0, 0), 2.0); // paid even with no items under `always`
    /// assert_eq!(s.name(s.root()), "P1");
    /// ```
    pub fn affine(
        items: u64,
        root: usize,
        comm: &[(f64, f64)],
        comp: &[(f64, f64)],
        rule: StartupRule,
    ) -> Result<Self, InstanceError> {
        assert_eq!(
            comm.len(),
            comp.len(),
            "one comm and one comp per processor"
        );
        Self::from_spec(ScatterInstanceSpec {
            items,
            root: format!("P{root}"),
            startup_rule: rule,
            processors: comm
                .iter()
                .zip(comp)
                .map(|(&(a, b), &(w, s))| ProcessorSpec {
                    name: None,
                    comm: CostSpec::affine(a, b),
                    comp: CostSpec::affine(w, s),
                })
                .collect(),
        })
    }

    /// Builds and validates an instance of linear costs (no startups): `comm[i]` and
    /// `comp[i]` are seconds per item; default names `P0, P1, …`.
    ///
    /// Panics if the slices differ in length. Errors as [`ScatterInstance::from_spec`].
    ///
    /// # Example
    /// ```
    /// use hetbal::scatter::ScatterInstance;
    /// let s = ScatterInstance::linear(3, 2, &[2.0, 4.0, 0.0], &[6.0, 8.0, 6.0]).unwrap();
    /// assert_eq!(s.comp_time(1, 2), 16.0);
    /// ```
    pub fn linear(
        items: u64,
        root: usize,
        comm: &[f64],
        comp: &[f64],
    ) -> Result<Self, InstanceError> {
        let comm: Vec<(f64, f64)> = comm.iter().map(|&a| (a, 0.0)).collect();
        let comp: Vec<(f64, f64)> = comp.iter().map(|&w| (w, 0.0)).collect();
        Self::affine(items, root, &comm, &comp, StartupRule::WhenUsed)
    }

    /// The document of this instance (names filled in, startups written out).
    ///
    /// # Example
    /// ```
    /// use hetbal::scatter::ScatterInstance;
    /// let s = ScatterInstance::linear(3, 1, &[1.0, 0.0], &[2.0, 3.0]).unwrap();
    /// assert_eq!(ScatterInstance::from_spec(s.to_spec()).unwrap(), s);
    /// assert_eq!(s.to_spec().root, "P1");
    /// ```
    pub fn to_spec(&self) -> ScatterInstanceSpec {
        ScatterInstanceSpec {
            items: self.items,
            root: self.names[self.root].clone(),
            startup_rule: self.rule,
            processors: (0..self.len())
                .map(|i| ProcessorSpec {
                    name: Some(self.names[i].clone()),
                    comm: self.comm[i].to_spec(),
                    comp: self.comp[i].to_spec(),
                })
                .collect(),
        }
    }

    /// The same instance under another startup rule.
    ///
    /// # Example
    /// ```
    /// use hetbal::scatter::{ScatterInstance, StartupRule};
    /// let s = ScatterInstance::affine(2, 1, &[(1.0, 5.0), (0.0, 0.0)], &[(1.0, 0.0), (1.0, 0.0)],
    ///                                 StartupRule::WhenUsed).unwrap();
    /// assert_eq!(s.comm_time(0, 0), 0.0);
    /// assert_eq!(s.with_rule(StartupRule::Always).comm_time(0, 0), 5.0);
    /// ```
    pub fn with_rule(&self, rule: StartupRule) -> Self {
        ScatterInstance {
            rule,
            ..self.clone()
        }
    }

    /// Number of items N.
    pub fn items(&self) -> u64 {
        self.items
    }
    /// Index of the root.
    pub fn root(&self) -> usize {
        self.root
    }
    /// The startup rule.
    pub fn startup_rule(&self) -> StartupRule {
        self.rule
    }
    /// Number of processors p, root included (>= 1).
    pub fn len(&self) -> usize {
        self.names.len()
    }
    /// Always false: a valid instance has at least its root.
    pub fn is_empty(&self) -> bool {
        false
    }
    /// Name of processor `i`.
    pub fn name(&self, i: usize) -> &str {
        &self.names[i]
    }
    /// All names, in file order.
    pub fn names(&self) -> &[String] {
        &self.names
    }
    /// Index of the processor called `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }
    /// Communication cost of processor `i` (time for the root to send it x items).
    pub fn comm(&self, i: usize) -> &Cost {
        &self.comm[i]
    }
    /// Computation cost of processor `i`.
    pub fn comp(&self, i: usize) -> &Cost {
        &self.comp[i]
    }
    /// `Tcomm_i(x)` under the instance's startup rule (`x <= items`).
    pub fn comm_time(&self, i: usize, x: u64) -> f64 {
        self.comm[i].time(x, self.rule)
    }
    /// `Tcomp_i(x)` under the instance's startup rule (`x <= items`).
    pub fn comp_time(&self, i: usize, x: u64) -> f64 {
        self.comp[i].time(x, self.rule)
    }
    /// True when every cost is affine.
    pub fn is_affine(&self) -> bool {
        self.comm
            .iter()
            .chain(&self.comp)
            .all(|c| matches!(c, Cost::Affine { .. }))
    }
}
