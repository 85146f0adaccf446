//! The mapping experiment: sharing-aware (H2) against sharing-blind (H1) ring mapping.
