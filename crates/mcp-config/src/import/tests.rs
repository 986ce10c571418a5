//! Table tests of every field mapping, one realistic file per host, and hostile input.
