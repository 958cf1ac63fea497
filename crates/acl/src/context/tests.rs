use super::*;

fn ctx(acl: ResolvedAcl) -> AuthContext {
    AuthContext::for_user(Uuid::nil(), None, Uuid::nil()).with_acl(acl)
}

#[test]
fn features_and_org_restrictions() {
    let org = Uuid::from_u128(1);
    let c = ctx(ResolvedAcl {
        features: vec!["auth.*".into()],
        allowed_organization_ids: Some(vec![org]),
        selected_organization_id: Some(org),
        ..Default::default()
    });
    assert!(c.has("auth.users.list"));
    assert!(!c.has("directory.tenants.view"));
    assert!(c.require("directory.x").is_err());
    let outside = ctx(ResolvedAcl {
        features: vec!["auth.*".into()],
        allowed_organization_ids: Some(vec![]),
        selected_organization_id: Some(org),
        ..Default::default()
    });
    assert!(!outside.has("auth.users.list"));
    let sa = ctx(ResolvedAcl {
        is_super_admin: true,
        ..Default::default()
    });
    assert!(sa.has("anything.at_all"));
}

#[test]
fn a_key_acts_under_its_own_id() {
    let key = Uuid::from_u128(7);
    let mut c = ctx(ResolvedAcl::default());
    assert_eq!(c.actor().user_id, Some(Uuid::nil()));
    c.user_id = None;
    c.api_key_id = Some(key);
    c.kind = CredentialKind::ApiKey;
    assert_eq!(c.actor_id(), Some(key));
    assert_eq!(c.actor().user_id, Some(key));
}

#[test]
fn answers_are_kept_only_for_sessions_with_a_known_acl_version() {
    let (tenant, org, user) = (Uuid::from_u128(1), Uuid::from_u128(2), Uuid::from_u128(3));
    let mut session = AuthContext::for_user(tenant, org, user);
    assert_eq!(session.read_owner(), None, "no ACL version");
    session.acl_version = Some(7);
    assert_eq!(
        session.read_owner(),
        Some(ReadOwner {
            user_id: user,
            tenant_id: Some(tenant),
            home_organization_id: Some(org),
            acl_version: 7,
        })
    );
    let mut key = AuthContext::for_api_key(tenant, Uuid::from_u128(4)).with_user(user);
    key.acl_version = Some(7);
    assert_eq!(
        key.read_owner(),
        None,
        "API keys are never served kept answers"
    );
}

#[test]
fn reads_credentials() {
    let req = actix_web::test::TestRequest::default()
        .insert_header(("authorization", "Bearer abc"))
        .cookie(actix_web::cookie::Cookie::new(
            SELECTED_ORG_COOKIE,
            "__all__",
        ))
        .to_http_request();
    let c = Credentials::from_request(&req);
    assert_eq!(c.bearer.as_deref(), Some("abc"));
    assert_eq!(c.selected_org.as_deref(), Some("__all__"));
    assert!(c.selected_org_from_cookie);
    let req = actix_web::test::TestRequest::default()
        .insert_header(("authorization", "ApiKey k.s"))
        .to_http_request();
    assert_eq!(
        Credentials::from_request(&req).api_key.as_deref(),
        Some("k.s")
    );
    let key = "omk_0123abcd.0123456789abcdef";
    let req = actix_web::test::TestRequest::default()
        .insert_header(("authorization", format!("Bearer {key}")))
        .to_http_request();
    let c = Credentials::from_request(&req);
    assert_eq!(c.api_key.as_deref(), Some(key));
    assert!(c.bearer.is_none());
}
