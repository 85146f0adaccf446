//! [`Policy::OfflineBest`]: the best set of redistribution points, knowing the
//! future speeds, by dynamic programming over the points.

use super::scenario::SimulationError;
#[cfg(doc)]
use super::simulator::Policy;
use super::simulator::{LoadsId, Simulator};

impl Simulator {
    /// The optimal set of points: `best[j]` is the least time to finish iteration
    /// j and redistribute after it; from a redistribution after r (or the start,
    /// r = 0) the loads are fixed until the next one, so
    /// `best[j] = min_r best[r] + sum_{k=r+1..j} T_k(loads_r) + cost(loads_r, loads_j)`.
    pub(super) fn offline_best_points(&mut self) -> Result<Vec<u32>, SimulationError> {
        let k_total = self.scenario.iterations as usize;
        // state_loads[r]: loads after a redistribution after iteration r (r = 0: start).
        let mut state_loads: Vec<LoadsId> = vec![0];
        for r in 1..k_total {
            state_loads.push(self.targets_after(r as u32)?);
        }
        // Iteration times by (loads, epoch), each computed once: O(ids * E * n).
        let epochs = self.epoch_times.len();
        let mut table = vec![f64::NAN; self.loads.len() * epochs];
        let mut iteration_time = |simulator: &Self, loads: LoadsId, k: usize| {
            let slot = loads * epochs + simulator.epoch_of[k - 1];
            if table[slot].is_nan() {
                table[slot] = simulator.iteration_time(loads, k as u32);
            }
            table[slot]
        };
        let mut best = vec![f64::INFINITY; k_total];
        let mut parent = vec![usize::MAX; k_total];
        best[0] = 0.0;
        // running[r] = best[r] + iterations r+1..=j with loads_r, advanced with j.
        let mut running = vec![f64::INFINITY; k_total];
        let mut final_best = (f64::INFINITY, 0);
        for j in 1..=k_total {
            running[j - 1] = best[j - 1];
            for r in 0..j {
                if running[r].is_finite() {
                    running[r] += iteration_time(self, state_loads[r], j);
                }
            }
            if j == k_total {
                for (r, &time) in running.iter().enumerate() {
                    if time < final_best.0 {
                        final_best = (time, r);
                    }
                }
                break;
            }
            for r in 0..j {
                if !running[r].is_finite() || state_loads[r] == state_loads[j] {
                    continue; // nothing to move: the same as not redistributing
                }
                let time = running[r] + self.cost(state_loads[r], state_loads[j])?;
                if time < best[j] {
                    best[j] = time;
                    parent[j] = r;
                }
            }
        }
        let mut points = Vec::new();
        let mut r = final_best.1;
        while r != 0 {
            points.push(r as u32);
            r = parent[r];
        }
        points.reverse();
        Ok(points)
    }
}
