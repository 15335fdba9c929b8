//! Every database bakeoff manages, one [`Backend`] each: the registry the run pipeline looks a
//! plan's database up in. It names each backend's `managed.rs`, which names only the trait
//! file ([`crate::managed`]); adding a database is its folder and its line here.

use crate::backend::Db;
use crate::managed::Backend;

/// Every database bakeoff manages.
pub const BACKENDS: &[Backend] = &[
    crate::postgres::managed::BACKEND,
    crate::sqlite::managed::BACKEND,
    crate::mariadb::managed::BACKEND,
];

/// The backend of `db`.
pub fn backend(db: Db) -> &'static Backend {
    BACKENDS
        .iter()
        .find(|b| b.db == db)
        .expect("every database has a backend")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_database_has_one_backend() {
        for db in Db::ALL {
            assert_eq!(BACKENDS.iter().filter(|b| b.db == db).count(), 1, "{db:?}");
            assert_eq!(backend(db).db, db);
        }
    }
}
