//! Applying a sidebar preference to the navigation groups.

use std::collections::HashMap;

use super::{NavGroup, NavItem};
use crate::sidebar::SidebarSettings;

fn label<'s>(
    map: &'s std::collections::BTreeMap<String, String>,
    keys: &[&str],
) -> Option<&'s str> {
    keys.iter()
        .find_map(|k| map.get(*k))
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
}

/// Applies one preference: hidden items go, labels are overridden (else the
/// defaults show), items follow `itemOrder` and groups `groupOrder` (unlisted
/// ones keep their place after the listed ones). Items are named by href or id.
pub fn apply(groups: Vec<NavGroup>, settings: &SidebarSettings) -> Vec<NavGroup> {
    let group_rank: HashMap<&str, usize> = settings
        .group_order
        .iter()
        .enumerate()
        .rev()
        .map(|(i, id)| (id.as_str(), i))
        .collect();
    let hidden = |item: &NavItem| {
        settings
            .hidden_items
            .iter()
            .any(|h| *h == item.href || *h == item.id)
    };
    let mut out: Vec<NavGroup> = groups
        .into_iter()
        .filter_map(|group| {
            let order = settings.item_order.get(&group.id);
            let rank = |item: &NavItem| {
                order
                    .and_then(|list| list.iter().position(|k| *k == item.href || *k == item.id))
                    .unwrap_or(usize::MAX)
            };
            let mut items: Vec<NavItem> = group
                .items
                .into_iter()
                .filter(|item| !hidden(item))
                .map(|item| NavItem {
                    title: label(&settings.item_labels, &[&item.href, &item.id])
                        .map(String::from)
                        .unwrap_or_else(|| item.default_title.clone()),
                    ..item
                })
                .collect();
            items.sort_by_key(|item| rank(item));
            (!items.is_empty()).then(|| NavGroup {
                name: label(&settings.group_labels, &[&group.id])
                    .map(String::from)
                    .unwrap_or_else(|| group.default_name.clone()),
                items,
                ..group
            })
        })
        .collect();
    out.sort_by_key(|g| group_rank.get(g.id.as_str()).copied().unwrap_or(usize::MAX));
    out
}

/// What the role preference made of the groups becomes the user's default.
pub(super) fn adopt_defaults(groups: Vec<NavGroup>) -> Vec<NavGroup> {
    groups
        .into_iter()
        .map(|g| NavGroup {
            default_name: g.name.clone(),
            items: g
                .items
                .into_iter()
                .map(|i| NavItem {
                    default_title: i.title.clone(),
                    ..i
                })
                .collect(),
            ..g
        })
        .collect()
}
