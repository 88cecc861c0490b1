-- A migration that fails half-way: the table it creates first must not survive.

-- +goose Up
CREATE TABLE migration_probe (id int);
SELECT 1 / 0;

-- +goose Down
DROP TABLE migration_probe;
