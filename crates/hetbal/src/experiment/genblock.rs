//! The GEN_BLOCK paper's scenarios I–V (section 5).
