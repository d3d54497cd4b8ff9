-- A store as ifmeter wrote it at schema version 5 (tests: StoreUpgradeTests):
-- version4.sql as the version-5 daemon upgraded it (its unfolded
-- five-minute rows folded, the totals untouched), dumped by the sqlite3
-- shell. CHECK constraints with IN lists, which version 6 rewrites.
PRAGMA page_size = 1024;
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
INSERT INTO meta VALUES('basis','estimate: kernel interface counters');
INSERT INTO meta VALUES('boot_id','boot-a');
INSERT INTO meta VALUES('created','1767225600');
INSERT INTO meta VALUES('folded_through','1767226200');
INSERT INTO meta VALUES('last_commit','1767229200');
INSERT INTO meta VALUES('netns','0');
INSERT INTO meta VALUES('presence','recorded');
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
INSERT INTO interface VALUES(1,'wwan0','cellular','kind wwan','wwan',1767225600,1767229200,1000,2000,10,20,0,0,0,0,'estimate: kernel interface counters',NULL);
INSERT INTO interface VALUES(2,'tun0','tunnel','kind tun','tun',1767225600,1767226200,300,400,3,4,0,0,0,0,'estimate: kernel interface counters',NULL);
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
INSERT INTO life VALUES(1,1,'boot-a',3,'wwan0',1767225600,1767229200,12.5,0,NULL,NULL,5000,6000,50,60,0,0,0,0,1000,2000,10,20);
INSERT INTO life VALUES(2,2,'boot-a',7,'tun0',1767225600,1767226200,20.0,0,1767226200,'removed',300,400,3,4,0,0,0,0,300,400,3,4);
CREATE TABLE present_link (ifindex INTEGER PRIMARY KEY, name TEXT NOT NULL);
INSERT INTO present_link VALUES(1,'lo');
INSERT INTO present_link VALUES(3,'wwan0');
CREATE TABLE boot_total (
    boot_id TEXT NOT NULL,
    interface_id INTEGER NOT NULL REFERENCES interface(id),
    rx_bytes INTEGER NOT NULL DEFAULT 0, tx_bytes INTEGER NOT NULL DEFAULT 0,
    rx_packets INTEGER NOT NULL DEFAULT 0, tx_packets INTEGER NOT NULL DEFAULT 0,
    basis TEXT NOT NULL DEFAULT 'estimate: kernel interface counters',
    PRIMARY KEY (boot_id, interface_id)
) WITHOUT ROWID;
INSERT INTO boot_total VALUES('boot-a',1,1000,2000,10,20,'estimate: kernel interface counters');
INSERT INTO boot_total VALUES('boot-a',2,300,400,3,4,'estimate: kernel interface counters');
CREATE TABLE bucket (
    interface_id INTEGER NOT NULL,
    granularity TEXT NOT NULL CHECK (granularity IN ('5min', 'hour', 'day', 'month', 'year')),
    start INTEGER NOT NULL,
    rx_bytes INTEGER NOT NULL DEFAULT 0, tx_bytes INTEGER NOT NULL DEFAULT 0,
    rx_packets INTEGER NOT NULL DEFAULT 0, tx_packets INTEGER NOT NULL DEFAULT 0,
    basis TEXT NOT NULL DEFAULT 'estimate: kernel interface counters',
    incomplete TEXT, rx_errors INTEGER NOT NULL DEFAULT 0, tx_errors INTEGER NOT NULL DEFAULT 0, rx_dropped INTEGER NOT NULL DEFAULT 0, tx_dropped INTEGER NOT NULL DEFAULT 0, last_counted INTEGER,
    PRIMARY KEY (granularity, start, interface_id)
) WITHOUT ROWID;
INSERT INTO bucket VALUES(1,'5min',1767225600,400,800,4,8,'estimate: kernel interface counters',NULL,0,0,0,0,NULL);
INSERT INTO bucket VALUES(1,'5min',1767225900,600,1200,6,12,'estimate: kernel interface counters',NULL,0,0,0,0,NULL);
INSERT INTO bucket VALUES(2,'5min',1767225900,300,400,3,4,'estimate: kernel interface counters',NULL,0,0,0,0,NULL);
INSERT INTO bucket VALUES(1,'day',1767225600,1000,2000,10,20,'estimate: kernel interface counters',NULL,0,0,0,0,NULL);
INSERT INTO bucket VALUES(2,'day',1767225600,300,400,3,4,'estimate: kernel interface counters','history-unknown at 1767225600: first seen',0,0,0,0,NULL);
INSERT INTO bucket VALUES(1,'hour',1767225600,1000,2000,10,20,'estimate: kernel interface counters',NULL,0,0,0,0,NULL);
INSERT INTO bucket VALUES(2,'hour',1767225600,300,400,3,4,'estimate: kernel interface counters',NULL,0,0,0,0,NULL);
INSERT INTO bucket VALUES(1,'month',1767225600,1000,2000,10,20,'estimate: kernel interface counters',NULL,0,0,0,0,NULL);
INSERT INTO bucket VALUES(2,'month',1767225600,300,400,3,4,'estimate: kernel interface counters',NULL,0,0,0,0,NULL);
INSERT INTO bucket VALUES(1,'year',1767225600,1000,2000,10,20,'estimate: kernel interface counters',NULL,0,0,0,0,NULL);
INSERT INTO bucket VALUES(2,'year',1767225600,300,400,3,4,'estimate: kernel interface counters',NULL,0,0,0,0,NULL);
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
INSERT INTO event VALUES(1,1767226200,2,'boot-a','removed',7,NULL,'none',NULL,NULL,'deleted; final counters counted','estimate: kernel interface counters');
CREATE UNIQUE INDEX life_open ON life(boot_id, netns, ifindex) WHERE ended IS NULL;
CREATE INDEX event_time ON event(time);
PRAGMA user_version = 5;
COMMIT;
