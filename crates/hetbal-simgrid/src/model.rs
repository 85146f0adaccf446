//! The network models a replay runs under, and the SimGrid options each one sets.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A network model of the replay.
///
/// * [`NetworkModel::OnePort`] (`oneport`): the papers' model, exactly, start-ups
///   included (docs/model.md "Start-ups"). SimGrid's CM02 model with every
///   correction switched off: TCP window bound off (`network/TCP-gamma:0`: no
///   `gamma / (2 latency)` bound on a flow's rate), no cross traffic
///   (`network/crosstraffic:no`), bandwidth and latency factors 1, weight-S 0, and
///   each link's latency the instance's start-up of its edge and direction (0 on
///   rings without start-ups). A single flow of `S` bytes over a link of
///   bandwidth `b` and latency `l` then takes exactly `l + S / b`: one item over a
///   link without start-up takes its cost `c`, a message of `m` items over a link
///   with start-up `l` takes `l + m c`, and the replay of a valid plan ends when
///   the plan says.
/// * [`NetworkModel::Cm02`] (`CM02`): SimGrid's CM02 model as SimGrid defines it
///   (max-min sharing, TCP window bound, cross traffic), with the links' latencies.
/// * [`NetworkModel::Lv08`] (`LV08`): SimGrid's default model (CM02 with the
///   latency factor 13.01, bandwidth factor 0.97 and the weight-S correction of
///   Velho and Legrand, 2008).
///
/// Every model also tightens SimGrid's numerical precisions (see
/// [`NetworkModel::settings`]), which only removes rounding noise. Which latency
/// a link gets under each model: [`crate::network::RingLink::simgrid_latency`].
///
/// # Example
/// ```
/// use hetbal_simgrid::NetworkModel;
/// let model = NetworkModel::from_name("lv08").unwrap();
/// assert_eq!(model, NetworkModel::Lv08);
/// assert_eq!(model.name(), "LV08");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NetworkModel {
    /// The papers' one-port model (CM02 with every correction off, latencies the
    /// instance's start-ups).
    OnePort,
    /// SimGrid's CM02.
    Cm02,
    /// SimGrid's LV08 (its default).
    Lv08,
}

/// A value of a SimGrid configuration option.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Setting {
    /// A string option (`network/model`).
    Text(&'static str),
    /// A numeric option.
    Number(f64),
    /// A boolean option.
    Bool(bool),
}

impl NetworkModel {
    /// Every model, in the order of the documentation.
    pub const ALL: [NetworkModel; 3] = [
        NetworkModel::OnePort,
        NetworkModel::Cm02,
        NetworkModel::Lv08,
    ];

    /// The model's name: `oneport`, `CM02` or `LV08`.
    pub fn name(self) -> &'static str {
        match self {
            NetworkModel::OnePort => "oneport",
            NetworkModel::Cm02 => "CM02",
            NetworkModel::Lv08 => "LV08",
        }
    }

    /// The model named `name` (case-insensitive; `one-port` is accepted too).
    pub fn from_name(name: &str) -> Option<NetworkModel> {
        match name.to_ascii_lowercase().as_str() {
            "oneport" | "one-port" => Some(NetworkModel::OnePort),
            "cm02" => Some(NetworkModel::Cm02),
            "lv08" => Some(NetworkModel::Lv08),
            _ => None,
        }
    }

    /// The SimGrid configuration options the model sets, in order (the model
    /// first: it sets the defaults of its factors).
    ///
    /// ```
    /// use hetbal_simgrid::model::Setting;
    /// use hetbal_simgrid::NetworkModel;
    /// let settings = NetworkModel::OnePort.settings();
    /// assert_eq!(settings[0], ("network/model", Setting::Text("CM02")));
    /// assert!(settings.contains(&("network/TCP-gamma", Setting::Number(0.0))));
    /// ```
    pub fn settings(self) -> Vec<(&'static str, Setting)> {
        // Rounding only: SimGrid's default time precision (1e-9 s, absolute) would
        // shift events of long plans by more than 1e-9 relative.
        let precision = [
            ("surf/precision", Setting::Number(1e-15)),
            ("maxmin/precision", Setting::Number(1e-12)),
        ];
        let mut settings = match self {
            NetworkModel::OnePort => vec![
                ("network/model", Setting::Text("CM02")),
                ("network/TCP-gamma", Setting::Number(0.0)),
                ("network/crosstraffic", Setting::Bool(false)),
                ("network/bandwidth-factor", Setting::Number(1.0)),
                ("network/latency-factor", Setting::Number(1.0)),
                ("network/weight-S", Setting::Number(0.0)),
            ],
            NetworkModel::Cm02 => vec![("network/model", Setting::Text("CM02"))],
            NetworkModel::Lv08 => vec![("network/model", Setting::Text("LV08"))],
        };
        settings.extend(precision);
        settings
    }
}

impl fmt::Display for NetworkModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for NetworkModel {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for NetworkModel {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        NetworkModel::from_name(&name).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown network model {name:?}: choose oneport, CM02 or LV08"
            ))
        })
    }
}
