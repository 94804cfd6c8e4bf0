-- Keys that expire, and rolling (docs/api.md, "Keys that expire"; the admin tool's `key create
-- --expires-in/--expires-at` and `key roll`).
--
-- expires_at: from that instant the key gets the same 401 as an unknown one. Null: it does not
-- expire. A rolled key keeps working until the end of its overlap, which is its expires_at.
-- rolled_at: when it was rolled; a key is rolled once (its successor is rolled next).
ALTER TABLE "api_keys"
    ADD COLUMN "expires_at" TIMESTAMPTZ(3),
    ADD COLUMN "rolled_at" TIMESTAMPTZ(3);
