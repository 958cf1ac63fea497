//! Who may call each attachments endpoint (the authorization matrix,
//! docs/security.md). The file and image routes are public at this layer:
//! the handler decides per file (a private partition needs a caller in the
//! file's tenant and organization scope). Every route answers validation
//! errors in the reference's shape E (`{error}`).

use stoa_core::http::Access::{Features, Public};
use stoa_core::http::ErrorShape::E;
use stoa_core::http::Operation;

use crate::{MANAGE, VIEW};

pub const OPERATIONS: &[Operation] = &[
    Operation::get("/attachments", Features(&[VIEW])).errors(E),
    Operation::post("/attachments", Features(&[MANAGE])).errors(E),
    Operation::delete("/attachments", Features(&[MANAGE])).errors(E),
    Operation::get("/attachments/file/{id}", Public).errors(E),
    Operation::get("/attachments/image/{id}/{slug}", Public).errors(E),
    Operation::get("/attachments/image/{id}", Public).errors(E),
    Operation::get("/attachments/library", Features(&[VIEW])).errors(E),
    Operation::get("/attachments/library/{id}", Features(&[VIEW])).errors(E),
    Operation::patch("/attachments/library/{id}", Features(&[MANAGE]))
        .errors(E)
        .bad_json("Invalid payload"),
    Operation::delete("/attachments/library/{id}", Features(&[MANAGE])).errors(E),
    Operation::post("/attachments/transfer", Features(&[MANAGE]))
        .errors(E)
        .bad_json("Invalid payload"),
    Operation::get("/attachments/partitions", Features(&[MANAGE])).errors(E),
    Operation::post("/attachments/partitions", Features(&[MANAGE]))
        .errors(E)
        .bad_json("Invalid payload"),
    Operation::put("/attachments/partitions", Features(&[MANAGE]))
        .errors(E)
        .bad_json("Invalid payload"),
    Operation::delete("/attachments/partitions", Features(&[MANAGE])).errors(E),
];
