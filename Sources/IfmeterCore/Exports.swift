// The counter model and rules are a target of their own (pure, no
// dependencies); everything built on IfmeterCore sees them through it.
@_exported import IfmeterAccounting
