-- A store as ifmeter wrote it at schema version 4 (tests: StoreUpgradeTests).
-- Two interfaces, an open and an ended life, buckets of every granularity
-- (one marked incomplete), a reset event. The five-minute rows of
-- 1767225900 are not folded yet: the coarse rows lack them, the all-time
-- totals hold them.
PRAGMA page_size = 1024;
BEGIN;
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE interface (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    class TEXT NOT NULL,
    signal TEXT NOT NULL,
    kind TEXT NOT NULL,
    first_seen INTEGER NOT NULL,
    last_seen INTEGER NOT NULL,
    rx_bytes INTEGER NOT NULL DEFAULT 0, tx_bytes INTEGER NOT NULL DEFAULT 0,
    rx_packets INTEGER NOT NULL DEFAULT 0, tx_packets INTEGER NOT NULL DEFAULT 0,
    rx_errors INTEGER NOT NULL DEFAULT 0, tx_errors INTEGER NOT NULL DEFAULT 0,
    rx_dropped INTEGER NOT NULL DEFAULT 0, tx_dropped INTEGER NOT NULL DEFAULT 0,
    basis TEXT NOT NULL DEFAULT 'estimate: kernel interface counters',
    incomplete TEXT
);
CREATE TABLE life (
    id INTEGER PRIMARY KEY,
    interface_id INTEGER NOT NULL REFERENCES interface(id),
    boot_id TEXT NOT NULL,
    ifindex INTEGER NOT NULL,
    name TEXT NOT NULL,
    first_seen INTEGER NOT NULL,
    last_seen INTEGER NOT NULL,
    since_boot REAL NOT NULL,
    netns INTEGER NOT NULL DEFAULT 0,
    ended INTEGER,
    end_reason TEXT,
    rx_bytes INTEGER NOT NULL, tx_bytes INTEGER NOT NULL,
    rx_packets INTEGER NOT NULL, tx_packets INTEGER NOT NULL,
    rx_errors INTEGER NOT NULL, tx_errors INTEGER NOT NULL,
    rx_dropped INTEGER NOT NULL, tx_dropped INTEGER NOT NULL,
    counted_rx_bytes INTEGER NOT NULL DEFAULT 0, counted_tx_bytes INTEGER NOT NULL DEFAULT 0,
    counted_rx_packets INTEGER NOT NULL DEFAULT 0, counted_tx_packets INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX life_open ON life(boot_id, netns, ifindex) WHERE ended IS NULL;
CREATE TABLE present_link (ifindex INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE boot_total (
    boot_id TEXT NOT NULL,
    interface_id INTEGER NOT NULL REFERENCES interface(id),
    rx_bytes INTEGER NOT NULL DEFAULT 0, tx_bytes INTEGER NOT NULL DEFAULT 0,
    rx_packets INTEGER NOT NULL DEFAULT 0, tx_packets INTEGER NOT NULL DEFAULT 0,
    basis TEXT NOT NULL DEFAULT 'estimate: kernel interface counters',
    PRIMARY KEY (boot_id, interface_id)
) WITHOUT ROWID;
CREATE TABLE bucket (
    interface_id INTEGER NOT NULL,
    granularity TEXT NOT NULL CHECK (granularity IN ('5min', 'hour', 'day', 'month', 'year')),
    start INTEGER NOT NULL,
    rx_bytes INTEGER NOT NULL DEFAULT 0, tx_bytes INTEGER NOT NULL DEFAULT 0,
    rx_packets INTEGER NOT NULL DEFAULT 0, tx_packets INTEGER NOT NULL DEFAULT 0,
    basis TEXT NOT NULL DEFAULT 'estimate: kernel interface counters',
    incomplete TEXT,
    PRIMARY KEY (granularity, start, interface_id)
) WITHOUT ROWID;
CREATE TABLE event (
    id INTEGER PRIMARY KEY,
    time INTEGER NOT NULL,
    interface_id INTEGER NOT NULL REFERENCES interface(id),
    boot_id TEXT NOT NULL,
    reason TEXT NOT NULL,
    old_ifindex INTEGER,
    new_ifindex INTEGER,
    loss TEXT NOT NULL CHECK (loss IN ('none', 'unknown', 'discarded')),
    discarded_rx_bytes INTEGER,
    discarded_tx_bytes INTEGER,
    detail TEXT NOT NULL,
    basis TEXT NOT NULL DEFAULT 'estimate: kernel interface counters'
);
CREATE INDEX event_time ON event(time);
INSERT INTO meta(key, value) VALUES ('basis', 'estimate: kernel interface counters'), ('created', '1767225600'), ('boot_id', 'boot-a'), ('last_commit', '1767229200');
INSERT INTO interface(id, name, class, signal, kind, first_seen, last_seen, rx_bytes, tx_bytes, rx_packets, tx_packets) VALUES (1, 'wwan0', 'cellular', 'kind wwan', 'wwan', 1767225600, 1767229200, 1000, 2000, 10, 20), (2, 'tun0', 'tunnel', 'kind tun', 'tun', 1767225600, 1767226200, 300, 400, 3, 4);
INSERT INTO bucket(interface_id, granularity, start, rx_bytes, tx_bytes, rx_packets, tx_packets) VALUES (1, '5min', 1767225600, 400, 800, 4, 8), (1, '5min', 1767225900, 600, 1200, 6, 12), (1, 'hour', 1767225600, 400, 800, 4, 8), (1, 'day', 1767225600, 400, 800, 4, 8), (1, 'month', 1767225600, 400, 800, 4, 8), (1, 'year', 1767225600, 400, 800, 4, 8), (2, '5min', 1767225900, 300, 400, 3, 4), (2, 'day', 1767225600, 0, 0, 0, 0);
UPDATE bucket SET incomplete = 'history-unknown at 1767225600: first seen' WHERE interface_id = 2 AND granularity = 'day';
INSERT INTO event(id, time, interface_id, boot_id, reason, old_ifindex, new_ifindex, loss, detail) VALUES (1, 1767226200, 2, 'boot-a', 'removed', 7, NULL, 'none', 'deleted; final counters counted');
INSERT INTO life(id, interface_id, boot_id, ifindex, name, first_seen, last_seen, since_boot, netns, ended, end_reason, rx_bytes, tx_bytes, rx_packets, tx_packets, rx_errors, tx_errors, rx_dropped, tx_dropped, counted_rx_bytes, counted_tx_bytes, counted_rx_packets, counted_tx_packets) VALUES (1, 1, 'boot-a', 3, 'wwan0', 1767225600, 1767229200, 12.5, 0, NULL, NULL, 5000, 6000, 50, 60, 0, 0, 0, 0, 1000, 2000, 10, 20), (2, 2, 'boot-a', 7, 'tun0', 1767225600, 1767226200, 20.0, 0, 1767226200, 'removed', 300, 400, 3, 4, 0, 0, 0, 0, 300, 400, 3, 4);
INSERT INTO boot_total(boot_id, interface_id, rx_bytes, tx_bytes, rx_packets, tx_packets) VALUES ('boot-a', 1, 1000, 2000, 10, 20), ('boot-a', 2, 300, 400, 3, 4);
INSERT INTO present_link(ifindex, name) VALUES (1, 'lo'), (3, 'wwan0');
INSERT INTO meta(key, value) VALUES ('presence', 'recorded'), ('netns', '0'), ('folded_through', '1767225900');
PRAGMA user_version = 4;
COMMIT;
