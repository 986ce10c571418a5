//! The operating system's secret stores, for real: the kernel keyring
//! (keyutils) here, and the Secret Service (`gnome-keyring-daemon` under
//! `dbus-run-session`, which `.ci/run` starts) where one answers. Each
//! test files its secrets under a namespace of its own and removes them,
//! so nothing of the user's secrets is read or touched.

// Test helpers outside `#[test]` functions unwrap too.
#![allow(clippy::unwrap_used)]

use std::time::{SystemTime, UNIX_EPOCH};

use mcp_config::secret::{OsSecretStore, SecretBackend, SecretName, SecretStore, SecretValue};

fn namespace(tag: &str) -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("mcp-test-{tag}-{}-{nanos}", std::process::id())
}

/// Stores, replaces, lists and removes two secrets; the store starts and
/// ends empty in its namespace.
fn round_trip(store: &OsSecretStore) {
    let a = SecretName::new("api.token").unwrap();
    let b = SecretName::new("B_2").unwrap();
    assert_eq!(store.names().unwrap(), Vec::<SecretName>::new());
    assert_eq!(store.get(&a).unwrap(), None);
    // Printable, spaces, quotes, non-ASCII: kept byte for byte.
    let first = SecretValue::new("s3cr3t \"quoted\" ünï €");
    store.set(&a, &first).unwrap();
    assert_eq!(store.get(&a).unwrap(), Some(first));
    store.set(&a, &SecretValue::new("second")).unwrap();
    assert_eq!(store.get(&a).unwrap().unwrap().expose(), "second");
    store.set(&b, &SecretValue::new("b")).unwrap();
    assert_eq!(store.names().unwrap(), vec![b.clone(), a.clone()]);
    assert!(store.remove(&a).unwrap());
    assert!(!store.remove(&a).unwrap());
    assert_eq!(store.get(&a).unwrap(), None);
    assert!(store.remove(&b).unwrap());
    assert_eq!(store.names().unwrap(), Vec::<SecretName>::new());
    // Nothing the store says about itself shows a value.
    assert!(!format!("{store:?}").contains("second"));
}

#[cfg(target_os = "linux")]
#[test]
fn the_kernel_keyring_keeps_lists_and_forgets() {
    let store =
        OsSecretStore::open_in(SecretBackend::KernelKeyring, &namespace("keyutils")).unwrap();
    assert_eq!(store.kind(), "kernel keyring");
    round_trip(&store);
}

#[cfg(target_os = "linux")]
#[test]
fn namespaces_do_not_see_each_other() {
    let one = OsSecretStore::open_in(SecretBackend::KernelKeyring, &namespace("one")).unwrap();
    let two = OsSecretStore::open_in(SecretBackend::KernelKeyring, &namespace("two")).unwrap();
    let name = SecretName::new("shared").unwrap();
    one.set(&name, &SecretValue::new("1")).unwrap();
    assert_eq!(two.get(&name).unwrap(), None);
    assert!(two.names().unwrap().is_empty());
    assert!(one.remove(&name).unwrap());
}

#[test]
#[ignore = "needs a Secret Service: .ci/run runs it under dbus-run-session with gnome-keyring-daemon"]
fn the_secret_service_keeps_lists_and_forgets() {
    let store = OsSecretStore::open_in(SecretBackend::SecretService, &namespace("ss")).unwrap();
    assert_eq!(store.kind(), "Secret Service");
    round_trip(&store);
}

#[test]
#[ignore = "needs a Secret Service: .ci/run runs it under dbus-run-session with gnome-keyring-daemon"]
fn auto_prefers_the_secret_service_when_it_answers() {
    let store = OsSecretStore::open_in(SecretBackend::Auto, &namespace("auto")).unwrap();
    assert_eq!(store.kind(), "Secret Service");
}
