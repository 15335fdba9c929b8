//! Tests of `spec`.

use super::*;

#[test]
fn common_keys_and_a_types_own() {
    let s = StackSpec::parse("zfs:recordsize=8k,primarycache=metadata,atime=off,arc=100m").unwrap();
    assert_eq!(s.kind, StackKind::named("zfs").unwrap());
    assert_eq!(s.options["recordsize"], "8k");
    assert_eq!(s.options["primarycache"], "metadata");
    assert_eq!(s.options["arc"], "100m");
    let s = StackSpec::parse("zfs:devices=4,layout=mirror-stripe,log=1,size=64m").unwrap();
    assert_eq!(
        (s.devices, s.size, s.backing_devices()),
        (4, Some(64 << 20), 5)
    );
    assert!(!s.options.contains_key("devices"), "common keys are fields");
}

#[test]
fn mount_and_mkfs_values_keep_their_commas() {
    let s = StackSpec::parse("xfs:mkfs=-b size=4096,mount=noatime,nodiratime").unwrap();
    assert_eq!(s.mkfs, vec!["-b", "size=4096"]);
    assert_eq!(s.mount.as_deref(), Some("noatime,nodiratime"));
    let s = StackSpec::parse("ext4:mount=noatime,commit=60,devices=1").unwrap();
    assert_eq!(s.mount.as_deref(), Some("noatime,commit=60"));
    let s = StackSpec::parse("zfs:mount=noatime,ro,recordsize=8k").unwrap();
    assert_eq!(s.mount.as_deref(), Some("noatime,ro"));
    assert_eq!(s.options["recordsize"], "8k");
}

#[test]
fn toml_tables_mean_the_same_as_the_command_line() {
    let t: toml::Table = toml::from_str(
        "type = \"zfs\"\nrecordsize = \"8k\"\nprimarycache = \"metadata\"\narc = \"100m\"",
    )
    .unwrap();
    let a = StackSpec::from_table(&t).unwrap();
    let b = StackSpec::parse("zfs:arc=100m,primarycache=metadata,recordsize=8k").unwrap();
    assert_eq!(a.options, b.options);
    let t: toml::Table =
        toml::from_str("type = \"btrfs\"\ndevices = 4\nprofile = \"raid10\"").unwrap();
    assert_eq!(StackSpec::from_table(&t).unwrap().devices, 4);
    let t: toml::Table = toml::from_str("recordsize = \"8k\"").unwrap();
    let e = StackSpec::from_table(&t).unwrap_err().to_string();
    assert!(e.contains("needs type") && e.contains("btrfs, zfs"), "{e}");
}

#[test]
fn dir_and_raw() {
    let s = StackSpec::parse("dir=/srv/data").unwrap();
    assert_eq!(s.kind.name(), "dir");
    assert_eq!(s.options["path"], "/srv/data");
    assert_eq!(s.backing_devices(), 0);
    assert!(!s.kind.needs_root());
    assert_eq!(StackSpec::parse("raw").unwrap().backing_devices(), 1);
    assert_eq!(StackSpec::parse("tmpfs").unwrap().backing_devices(), 0);
}

#[test]
fn refusals_list_what_is_allowed() {
    let e = StackSpec::parse("ext4:recordsize=8k")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("unknown key 'recordsize' for ext4") && e.contains("mount"),
        "{e}"
    );
    let e = StackSpec::parse("ntfs").unwrap_err().to_string();
    assert!(e.contains("allowed: raw, ext4"), "{e}");
    let e = StackSpec::parse("zfs:recordsize=3k")
        .unwrap_err()
        .to_string();
    assert!(e.contains("power of two"), "{e}");
    let e = StackSpec::parse("btrfs:profile=raid10")
        .unwrap_err()
        .to_string();
    assert!(e.contains("devices=4"), "{e}");
    let e = StackSpec::parse("zfs:primarycache=some")
        .unwrap_err()
        .to_string();
    assert!(e.contains("all, metadata, none"), "{e}");
    let e = StackSpec::parse("zfs:bogus=1").unwrap_err().to_string();
    assert!(e.contains("recordsize") && e.contains("layout"), "{e}");
    let e = StackSpec::parse("raw:offset=100").unwrap_err().to_string();
    assert!(e.contains("multiple of 512"), "{e}");
    assert!(StackSpec::parse("dir").is_err());
    assert!(StackSpec::parse("xfs:devices=17").is_err());
}

#[test]
fn every_type_documents_every_key_it_takes() {
    let names: Vec<&str> = StackKind::all().map(StackKind::name).collect();
    for name in &names {
        assert_eq!(
            names.iter().filter(|n| *n == name).count(),
            1,
            "{name} twice"
        );
        assert_eq!(StackKind::named(name).unwrap().name(), *name);
    }
    for kind in StackKind::all() {
        let keys = kind.keys();
        assert!(!keys.is_empty(), "{kind:?}");
        for k in &keys {
            assert!(!k.help.is_empty(), "{kind:?}.{}", k.key);
            assert!(kind.accepts(k.key));
            let same = keys.iter().filter(|o| o.key == k.key).count();
            assert_eq!(same, 1, "{kind:?}.{} twice", k.key);
        }
        for c in kind.driver().common {
            assert!(COMMON_KEYS.iter().any(|k| k.key == *c), "{kind:?}: {c}");
        }
    }
}

#[test]
fn a_types_own_keys_are_parsed_once_into_its_drivers_value() {
    use crate::fs::btrfs::spec::{BtrfsSpec, Profile};
    use crate::fs::zfs::spec::{PoolLayout, ZfsSpec};
    let s = StackSpec::parse("zfs:devices=4,layout=raid10,log=on,arc=64m,recordsize=8k").unwrap();
    let z: &ZfsSpec = s.typed();
    assert_eq!(
        (z.layout, z.log, z.arc),
        (PoolLayout::MirrorStripe, true, Some(64 << 20))
    );
    assert_eq!(z.props["recordsize"], "8k");
    assert_eq!(s.roles(), ["data", "data", "data", "data", "log"]);
    let s = StackSpec::parse("btrfs:devices=2,profile=raid1,metadata=single").unwrap();
    let want = BtrfsSpec {
        data: Some(Profile::Raid1),
        metadata: Some(Profile::Single),
    };
    assert_eq!(s.typed::<BtrfsSpec>(), &want);
    let s = StackSpec::parse("dir=/srv/data").unwrap();
    assert_eq!(
        s.typed::<std::path::PathBuf>(),
        std::path::Path::new("/srv/data")
    );
    let s = StackSpec::parse("ext4:mount=noatime").unwrap();
    s.typed::<()>();
    // The parsed value follows from the text: specs are compared, cloned and shown by it.
    let again = StackSpec::parse("zfs:devices=4,layout=raid10,log=on,arc=64m,recordsize=8k");
    let again = again.unwrap();
    assert_eq!(again.clone(), again);
    assert!(format!("{again:?}").contains("MirrorStripe"), "{again:?}");
}

#[test]
#[should_panic(expected = "not a")]
fn a_driver_asking_for_another_type_is_a_bug_that_names_both() {
    let s = StackSpec::parse("ext4").unwrap();
    s.typed::<crate::fs::zfs::spec::ZfsSpec>();
}
