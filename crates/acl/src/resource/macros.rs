//! The parts of a kit resource that every resource writes the same way,
//! written once: its `Tracked` view, tenant and authorization, and its
//! `Resource` identity when the state has the usual `id`, `tenant_id` and
//! `organization_id` fields.

/// Inside `impl Tracked for S`: the view is the state's JSON, the tenant its
/// `tenant_id` field, and undo and redo authorize through the kit
/// ([`crate::resource::authorize`]: the caller's reach and feature now, then
/// the resource's own checks).
#[macro_export]
macro_rules! tracked_by_kit {
    () => {
        fn view(&self) -> ::serde_json::Value {
            ::serde_json::to_value(self).unwrap_or(::serde_json::Value::Null)
        }

        fn tenant(&self) -> ::core::option::Option<::uuid::Uuid> {
            ::core::option::Option::Some(self.tenant_id)
        }

        $crate::kit_authorize!();
    };
}

/// Inside `impl Tracked for S`: undo and redo authorize through the kit
/// ([`crate::resource::authorize`]), for a state whose view or tenant is
/// its own.
#[macro_export]
macro_rules! kit_authorize {
    () => {
        async fn authorize(
            conn: &mut ::diesel_async::AsyncPgConnection,
            actor: &::stoa_core::command::Actor,
            current: ::core::option::Option<&Self>,
            target: ::core::option::Option<&Self>,
        ) -> ::core::result::Result<(), ::stoa_core::AppError> {
            $crate::resource::authorize(conn, actor, current, target).await
        }
    };
}

/// Inside `impl Resource for S`: the id, tenant and organization of a state
/// with `id`, `tenant_id` and `organization_id` (all `Uuid`) fields; with
/// `(scope)`, of one whose tenant and (optional) organization are in a
/// `scope` field (`stoa_core::scope`-like: `tenant_id`, `organization_id`).
#[macro_export]
macro_rules! resource_identity {
    (scope) => {
        fn id(&self) -> ::uuid::Uuid {
            self.id
        }

        fn tenant_id(&self) -> ::uuid::Uuid {
            self.scope.tenant_id
        }

        fn organization(&self) -> ::core::option::Option<::uuid::Uuid> {
            self.scope.organization_id
        }
    };
    () => {
        fn id(&self) -> ::uuid::Uuid {
            self.id
        }

        fn tenant_id(&self) -> ::uuid::Uuid {
            self.tenant_id
        }

        fn organization(&self) -> ::core::option::Option<::uuid::Uuid> {
            ::core::option::Option::Some(self.organization_id)
        }
    };
}
