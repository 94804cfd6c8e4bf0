-- Restricted keys (docs/api.md, "Scopes"): the scopes a key was given (`key create --scopes`);
-- empty for every scope, which is what every key made before has. A key is never given none.
ALTER TABLE "api_keys" ADD COLUMN "scopes" TEXT[] NOT NULL DEFAULT '{}';
