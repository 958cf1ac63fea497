//! Request and response bodies, with the reference's limits.
//!
//! Bodies are strict (unknown keys answer 400). Update fields are tri-state:
//! absent keeps the stored value, `null` clears it, a value sets it.

mod bodies;
mod checks;
mod lists;
mod payload;

pub use bodies::{AdminRegisterDevice, RegisterDevice, UpdateDevice};
pub use lists::{
    DeviceDeactivated, DeviceDetail, DeviceList, DeviceListQuery, DeviceRegistered, DeviceUpdated,
    SortDir, SortField,
};
pub use payload::{DevicePayload, PushToken};
