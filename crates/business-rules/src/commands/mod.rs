//! Every write of the module through the resource kit
//! (`stoa_acl::resource`): a rule's, a set's and a member's whole row is its
//! `Tracked` state and a `Resource` ([`rules`], [`sets`]); the kit's one
//! `Save` command writes it and records the undoable entry, and undo and
//! redo go through the shared `StateHandler`, whose `authorize` (the kit's)
//! repeats the forward checks (tenant, organization reach, feature, the
//! resource's own checks) for the caller of the undo.
//!
//! The one command of the module's own is [`RotateSecret`]: a webhook
//! secret is not part of a rule's tracked state, and its rotation is not
//! undoable (see [`crate::secrets`]).

pub mod rules;
pub mod sets;

use std::sync::Arc;

use diesel_async::AsyncPgConnection;
use futures_util::future::BoxFuture;
use serde_json::Value;
use stoa_acl::Services;
use stoa_acl::resource::handler;
use stoa_core::AppError;
use stoa_core::command::tracked::entry;
use stoa_core::command::{Actor, Command, CommandHandler, LogEntry, StateHandler};
use uuid::Uuid;

use crate::model::{MemberState, RuleState, SetState};

pub const RULE_KIND: &str = "business_rules.rule";
pub const SET_KIND: &str = "business_rules.set";
pub const MEMBER_KIND: &str = "business_rules.set_member";

pub const RULE_CREATE: &str = "business_rules.rules.create";
pub const RULE_UPDATE: &str = "business_rules.rules.update";
pub const RULE_DELETE: &str = "business_rules.rules.delete";
/// Not undoable (no handler): see [`RotateSecret`].
pub const RULE_ROTATE_SECRET: &str = "business_rules.rules.rotate_webhook_secret";
pub const SET_CREATE: &str = "business_rules.sets.create";
pub const SET_UPDATE: &str = "business_rules.sets.update";
pub const SET_DELETE: &str = "business_rules.sets.delete";
pub const MEMBER_CREATE: &str = "business_rules.members.create";
pub const MEMBER_UPDATE: &str = "business_rules.members.update";
pub const MEMBER_DELETE: &str = "business_rules.members.delete";

/// The module's undo/redo handlers. A rule's check its content with
/// `services` for the caller of the undo, as its routes do: the entity
/// type's features and the API keys its platform calls run as, so an undo
/// cannot bring back a rule its caller could not write.
pub fn handlers(services: Arc<Services>) -> Vec<Arc<dyn CommandHandler>> {
    let rule = |id| handler::<RuleState>(id, services.clone());
    vec![
        rule(RULE_CREATE),
        rule(RULE_UPDATE),
        rule(RULE_DELETE),
        StateHandler::<SetState>::boxed(SET_CREATE),
        StateHandler::<SetState>::boxed(SET_UPDATE),
        StateHandler::<SetState>::boxed(SET_DELETE),
        StateHandler::<MemberState>::boxed(MEMBER_CREATE),
        StateHandler::<MemberState>::boxed(MEMBER_UPDATE),
        StateHandler::<MemberState>::boxed(MEMBER_DELETE),
    ]
}

/// The entry of a change of record `id` of organization `organization`
/// (every record of the module has one), with its event when any.
fn scoped_entry<T: stoa_core::command::tracked::Tracked>(
    label: &str,
    id: Uuid,
    organization: Uuid,
    before: Option<&T>,
    after: Option<&T>,
    event: Option<(String, Value)>,
) -> LogEntry {
    let mut log = entry(label, id, before, after);
    log.organization_id = Some(organization);
    match event {
        Some((name, payload)) => log.with_event(name, payload),
        None => log,
    }
}

/// Replaces a rule's webhook secret (`stored`: the new one, encrypted). The
/// entry names the rule but holds no secret, and is not undoable: the
/// secret is not part of the rule's tracked state (see [`crate::secrets`]),
/// so this write cannot be the kit's `Save` of a state.
pub struct RotateSecret {
    pub tenant_id: Uuid,
    pub organization_id: Uuid,
    pub id: Uuid,
    pub stored: String,
}

impl Command for RotateSecret {
    type Output = ();
    fn id(&self) -> &'static str {
        RULE_ROTATE_SECRET
    }
    fn execute<'a>(
        self,
        conn: &'a mut AsyncPgConnection,
        _: &'a Actor,
    ) -> BoxFuture<'a, Result<((), LogEntry), AppError>> {
        Box::pin(async move {
            crate::secrets::store(conn, self.tenant_id, self.id, &self.stored).await?;
            let log = LogEntry {
                action_label: Some("Rotate business rule webhook secret".into()),
                resource_kind: Some(RULE_KIND.into()),
                resource_id: Some(self.id.to_string()),
                tenant_id: Some(self.tenant_id),
                organization_id: Some(self.organization_id),
                ..Default::default()
            };
            Ok(((), log))
        })
    }
}
