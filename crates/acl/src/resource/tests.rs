//! The kit's checks on a record, without a database.

use actix_web::http::StatusCode;
use diesel_async::AsyncPgConnection;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use stoa_core::AppError;
use stoa_core::command::Actor;
use stoa_core::command::tracked::Tracked;
use uuid::Uuid;

use super::{Resource, may_write};
use crate::{AuthContext, ResolvedAcl};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Thing {
    id: Uuid,
    tenant: Uuid,
    organization: Option<Uuid>,
}

impl Tracked for Thing {
    const KIND: &'static str = "test.thing";
    async fn lock(_: &mut AsyncPgConnection, _: Uuid) -> Result<(), AppError> {
        Ok(())
    }
    async fn load(_: &mut AsyncPgConnection, _: Uuid) -> Result<Option<Self>, AppError> {
        Ok(None)
    }
    async fn restore(&self, _: &mut AsyncPgConnection) -> Result<(), AppError> {
        Ok(())
    }
    async fn erase(_: &mut AsyncPgConnection, _: Uuid) -> Result<(), AppError> {
        Ok(())
    }
    fn view(&self) -> Value {
        Value::Null
    }
    fn tenant(&self) -> Option<Uuid> {
        Some(self.tenant)
    }
    async fn authorize(
        conn: &mut AsyncPgConnection,
        actor: &Actor,
        current: Option<&Self>,
        target: Option<&Self>,
    ) -> Result<(), AppError> {
        super::authorize(conn, actor, current, target).await
    }
}

impl Resource for Thing {
    const TABLE: &'static str = "things";
    const FEATURE: &'static str = "test.manage";
    type Services = ();
    fn id(&self) -> Uuid {
        self.id
    }
    fn tenant_id(&self) -> Uuid {
        self.tenant
    }
    fn organization(&self) -> Option<Uuid> {
        self.organization
    }
    fn not_found() -> AppError {
        AppError::not_found("Thing not found")
    }
}

const TENANT: Uuid = Uuid::from_u128(100);
const A: Uuid = Uuid::from_u128(1);
const B: Uuid = Uuid::from_u128(2);

fn caller(features: &[&str], orgs: Option<Vec<Uuid>>) -> AuthContext {
    AuthContext::for_user(TENANT, A, Uuid::from_u128(50)).with_acl(ResolvedAcl {
        features: features.iter().map(|f| f.to_string()).collect(),
        allowed_organization_ids: orgs,
        ..Default::default()
    })
}

fn thing(tenant: Uuid, organization: Option<Uuid>) -> Thing {
    Thing {
        id: Uuid::from_u128(7),
        tenant,
        organization,
    }
}

fn status(result: Result<(), AppError>) -> Option<StatusCode> {
    result.err().map(|e| e.status())
}

#[test]
fn a_write_needs_the_tenant_the_reach_and_the_feature() {
    let open = caller(&["test.manage"], None);
    assert_eq!(status(may_write(&open, &thing(TENANT, Some(B)))), None);
    assert_eq!(status(may_write(&open, &thing(TENANT, None))), None);
    let other = Uuid::from_u128(101);
    assert_eq!(
        status(may_write(&open, &thing(other, Some(A)))),
        Some(StatusCode::NOT_FOUND)
    );
}

#[test]
fn a_restricted_caller_writes_inside_its_organizations_only() {
    let restricted = caller(&["test.*"], Some(vec![A]));
    assert_eq!(
        status(may_write(&restricted, &thing(TENANT, Some(A)))),
        None
    );
    // Another organization's record does not exist for it.
    assert_eq!(
        status(may_write(&restricted, &thing(TENANT, Some(B)))),
        Some(StatusCode::NOT_FOUND)
    );
    // A tenant-wide record is readable, never writable.
    let err = may_write(&restricted, &thing(TENANT, None)).unwrap_err();
    assert_eq!(err.status(), StatusCode::FORBIDDEN);
    assert_eq!(err.code(), Some("organization_out_of_scope"));
}

#[test]
fn a_missing_feature_is_403() {
    let reader = caller(&["test.view"], None);
    assert_eq!(
        status(may_write(&reader, &thing(TENANT, Some(A)))),
        Some(StatusCode::FORBIDDEN)
    );
}

/// A record its owner writes; others with `test.admin` inside their reach.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Owned {
    thing: Thing,
    owner: Uuid,
}

impl Tracked for Owned {
    const KIND: &'static str = "test.owned";
    async fn lock(_: &mut AsyncPgConnection, _: Uuid) -> Result<(), AppError> {
        Ok(())
    }
    async fn load(_: &mut AsyncPgConnection, _: Uuid) -> Result<Option<Self>, AppError> {
        Ok(None)
    }
    async fn restore(&self, _: &mut AsyncPgConnection) -> Result<(), AppError> {
        Ok(())
    }
    async fn erase(_: &mut AsyncPgConnection, _: Uuid) -> Result<(), AppError> {
        Ok(())
    }
    fn view(&self) -> Value {
        Value::Null
    }
    fn tenant(&self) -> Option<Uuid> {
        Some(self.thing.tenant)
    }
    async fn authorize(
        conn: &mut AsyncPgConnection,
        actor: &Actor,
        current: Option<&Self>,
        target: Option<&Self>,
    ) -> Result<(), AppError> {
        super::authorize(conn, actor, current, target).await
    }
}

impl Resource for Owned {
    const TABLE: &'static str = "owned";
    const FEATURE: &'static str = "test.own";
    const OTHERS_FEATURE: Option<&'static str> = Some("test.admin");
    type Services = ();
    fn id(&self) -> Uuid {
        self.thing.id
    }
    fn tenant_id(&self) -> Uuid {
        self.thing.tenant
    }
    fn organization(&self) -> Option<Uuid> {
        self.thing.organization
    }
    fn owner(&self) -> Option<Uuid> {
        Some(self.owner)
    }
    fn not_found() -> AppError {
        AppError::not_found("Owned not found")
    }
}

/// The caller of [`caller`].
const ME: Uuid = Uuid::from_u128(50);
const OTHER: Uuid = Uuid::from_u128(51);

fn owned(owner: Uuid, organization: Option<Uuid>) -> Owned {
    Owned {
        thing: thing(TENANT, organization),
        owner,
    }
}

#[test]
fn an_owner_writes_its_record_wherever_it_is_and_others_need_the_admin_feature() {
    // The caller (user ME) is restricted to organization A.
    let own = caller(&["test.own"], Some(vec![A]));
    assert_eq!(status(may_write(&own, &owned(ME, Some(B)))), None);
    assert_eq!(status(may_write(&own, &owned(ME, None))), None);
    assert_eq!(
        status(may_write(&own, &owned(OTHER, Some(A)))),
        Some(StatusCode::FORBIDDEN)
    );
    let admin = caller(&["test.admin"], Some(vec![A]));
    assert_eq!(status(may_write(&admin, &owned(OTHER, Some(A)))), None);
    assert_eq!(
        status(may_write(&admin, &owned(OTHER, Some(B)))),
        Some(StatusCode::NOT_FOUND)
    );
    // Its own record without the owner's feature: 403.
    let neither = caller(&["test.view"], None);
    assert_eq!(
        status(may_write(&neither, &owned(ME, Some(A)))),
        Some(StatusCode::FORBIDDEN)
    );
    let other = Owned {
        thing: thing(Uuid::from_u128(101), Some(A)),
        owner: ME,
    };
    assert_eq!(status(may_write(&own, &other)), Some(StatusCode::NOT_FOUND));
}
