//! The conversation list: a keyset page cut at whole milliseconds, kept
//! while the tenant's conversations do not change.

use super::*;

/// The conversations the list shows the caller (filters and keyset
/// position, no order or window).
fn listed(
    ctx: &AuthContext,
    (tenant, org, user): (Uuid, Option<Uuid>, Uuid),
    agent: Option<&str>,
    status: Option<&str>,
    cursor: Option<OffsetDateTime>,
) -> cc::BoxedQuery<'static, diesel::pg::Pg> {
    let mut query = cc::table
        .filter(cc::tenant_id.eq(tenant))
        .filter(cc::deleted_at.is_null())
        .into_boxed();
    // Equality (or IS NULL) rather than IS NOT DISTINCT FROM, so the
    // activity index serves the filter.
    query = match org {
        Some(org) => query.filter(cc::organization_id.eq(org)),
        None => query.filter(cc::organization_id.is_null()),
    };
    if !ctx.has(CONVERSATIONS_MANAGE) {
        let shared = cp::table
            .filter(cp::user_id.eq(user))
            .filter(cp::deleted_at.is_null())
            .select(cp::conversation_id);
        query = query.filter(cc::owner_user_id.eq(user).or(cc::id.eq_any(shared)));
    }
    if let Some(a) = agent {
        query = query.filter(cc::agent_id.eq(a.to_string()));
    }
    if let Some(s) = status {
        query = query.filter(cc::status.eq(s.to_string()));
    }
    if let Some(c) = cursor {
        query = query.filter(cc::activity_at.lt(c));
    }
    query
}

/// How a page of `limit + 1` rows (newest first) was cut.
pub(super) enum Cut {
    /// `rows` is the page.
    Done,
    /// Every row of the page is in the millisecond of this time: the page
    /// must be that whole millisecond.
    WholeMillisecond(OffsetDateTime),
}

/// Cuts `rows` (up to `limit + 1`, newest first by `at`) to a page that
/// ends between two milliseconds. Cursors are times as the list writes them
/// (milliseconds) and continue with `at < cursor`, so a page that ended
/// inside a millisecond would make the next one skip the rest of it: the
/// page drops its last millisecond when the row after the page shares it.
pub(super) fn cut_at_millisecond<T>(
    rows: &mut Vec<T>,
    limit: i64,
    at: impl Fn(&T) -> OffsetDateTime,
) -> Cut {
    let limit = usize::try_from(limit).unwrap_or(0);
    let Some(first_after) = rows.get(limit) else {
        return Cut::Done;
    };
    let boundary = truncate(at(first_after));
    rows.truncate(limit);
    let keep = rows
        .iter()
        .take_while(|r| truncate(at(r)) != boundary)
        .count();
    if keep == 0 {
        return Cut::WholeMillisecond(boundary);
    }
    rows.truncate(keep);
    Cut::Done
}

/// `{items, nextCursor, total, totalCapped}`: newest activity first (last
/// message, else creation); `cursor` is the previous page's last
/// `lastMessageAt` (or `createdAt`), a keyset position. One statement: the
/// page and its total (counted from the cursor on, up to 1,000 rows past
/// it unless `total` asks for the exact count or none).
pub async fn list(
    conn: &mut AsyncPgConnection,
    ctx: &AuthContext,
    agent: Option<&str>,
    status: Option<&str>,
    cursor: Option<OffsetDateTime>,
    limit: i64,
    total: TotalMode,
) -> Result<Listed, AppError> {
    let scope = scope(ctx)?;
    let deps = ReadDeps::new(READ_DEPS, Some(scope.0));
    let count_limit = match total {
        TotalMode::Capped => Some(COUNT_AHEAD + 1),
        TotalMode::Exact => None,
        TotalMode::Skip => Some(0),
    };
    // The capped count walks the list's own order: the rows past a deep
    // cursor are the oldest, which a sequential scan reaches last (13 ms
    // over 100k conversations against 0.3 ms along the index).
    let counted = CountUpTo::new(
        listed(ctx, scope, agent, status, cursor)
            .select(cc::id)
            .order((cc::activity_at.desc(), cc::id.desc())),
        count_limit,
    );
    let page = listed(ctx, scope, agent, status, cursor)
        .select((ConversationRow::as_select(), counted, versions(deps)))
        .order((cc::activity_at.desc(), cc::id.desc()))
        .limit(limit + 1);
    let rows: Vec<(ConversationRow, i64, Vec<i64>)> = Cached(page).load(conn).await?;
    let count = <[_]>::first(&rows).map_or(0, |(_, c, _)| *c);
    let mut read_versions = <[_]>::first(&rows).map(|(_, _, v)| v.clone());
    let mut rows: Vec<(ConversationRow, i64)> = rows.into_iter().map(|(r, c, _)| (r, c)).collect();
    let activity = |(r, _): &(ConversationRow, i64)| r.last_message_at.unwrap_or(r.created_at);
    let mut more = rows.len() as i64 > limit;
    match cut_at_millisecond(&mut rows, limit, activity) {
        Cut::Done => {}
        Cut::WholeMillisecond(at) => {
            // Every row of the page shares one millisecond: the page is that
            // millisecond whole, so the next cursor skips none of it.
            let start = truncate(at);
            let end = start + time::Duration::MILLISECOND;
            let group = listed(ctx, scope, agent, status, cursor)
                .filter(cc::activity_at.ge(start))
                .filter(cc::activity_at.lt(end))
                .select(ConversationRow::as_select())
                .order((cc::activity_at.desc(), cc::id.desc()))
                .load::<ConversationRow>(conn)
                .await?;
            rows = group.into_iter().map(|r| (r, count)).collect();
            // Read in statements of their own: not one snapshot, not kept.
            read_versions = None;
            let after: Vec<Uuid> = listed(ctx, scope, agent, status, Some(start))
                .select(cc::id)
                .limit(1)
                .load(conn)
                .await?;
            more = !after.is_empty();
        }
    }
    // The cursor is the last row's time as the list writes it (milliseconds):
    // pages end between milliseconds, so `activity_at < cursor` continues
    // exactly after this page.
    let next = more
        .then(|| rows.last().map(activity))
        .flatten()
        .map(stoa_core::serde_util::timestamp::format);
    let (total, capped) = match total {
        TotalMode::Capped => (Some(count.min(COUNT_AHEAD)), count > COUNT_AHEAD),
        TotalMode::Exact => (Some(count), false),
        TotalMode::Skip => (None, false),
    };
    let items: Vec<Summary> = rows.into_iter().map(|(r, _)| summary(r, ctx)).collect();
    Ok(Listed {
        page: ConversationPage {
            items,
            next_cursor: next,
            total,
            total_capped: capped,
        },
        deps,
        versions: read_versions,
    })
}

/// The read model of the conversation list: every write to a tenant's
/// conversations or participants bumps its version (migration
/// `ai_assistant_conversations_read_version`); the caller's permissions
/// move `acl_version`, which a kept answer checks too.
pub const READ_DEPS: &[&str] = &["ai_assistant.conversations"];

/// `{items, nextCursor, total, totalCapped}`, serialized straight from the
/// rows (no intermediate JSON value).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversationPage {
    pub items: Vec<Summary>,
    pub next_cursor: Option<String>,
    pub total: Option<i64>,
    pub total_capped: bool,
}

/// A page and the read versions it was computed from (`None`: not kept).
pub struct Listed {
    pub page: ConversationPage,
    pub deps: ReadDeps,
    pub versions: Option<Vec<i64>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(micros: i64) -> OffsetDateTime {
        OffsetDateTime::UNIX_EPOCH + time::Duration::microseconds(micros)
    }

    #[test]
    fn a_page_ends_between_milliseconds() {
        // Newest first: 3.2 ms, 2.9, 2.5, 2.1, 0.9.
        let rows = [3_200, 2_900, 2_500, 2_100, 900].map(at).to_vec();
        let mut page = rows.clone();
        page.truncate(3);
        assert!(matches!(
            cut_at_millisecond(&mut page, 2, |t| *t),
            Cut::Done
        ));
        assert_eq!(
            page,
            [at(3_200)],
            "the 2 ms row after the page: 2.9 goes too"
        );
        let mut page = rows[1..4].to_vec();
        let cut = cut_at_millisecond(&mut page, 2, |t| *t);
        assert!(matches!(cut, Cut::WholeMillisecond(t) if t == at(2_000)));
        let mut page = rows[3..].to_vec();
        assert!(matches!(
            cut_at_millisecond(&mut page, 2, |t| *t),
            Cut::Done
        ));
        assert_eq!(page.len(), 2, "no row after the page: nothing to cut");
    }
}
