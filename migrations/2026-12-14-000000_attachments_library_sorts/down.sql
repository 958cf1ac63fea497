DROP INDEX attachments_library_size;
DROP INDEX attachments_library_name;
