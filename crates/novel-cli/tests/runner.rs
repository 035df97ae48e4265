//! All CLI integration tests, in one test binary (fast to build on two cores).

mod support;
mod test_chapter;
mod test_envelope;
mod test_init;
mod test_plugin;
mod test_state;
mod test_validate;
mod test_wrapper;
