//! The scatter paper's seismic tomography case (section 5), rebuilt from the values its text keeps.
