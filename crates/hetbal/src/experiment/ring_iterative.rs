//! The ring paper's section 7 study: redistribution policies on iterative applications.
