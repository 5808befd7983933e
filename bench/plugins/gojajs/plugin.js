// The JavaScript the goja measurement plugin runs: the same tool as
// plugins/js-hello's greet, and a loop that does a little work.
function greet(args) {
  return "Hello, " + args.name + "!";
}
function sum(args) {
  let s = 0;
  for (let i = 1; i <= (args.n || 10000); i++) s += i;
  return String(s);
}
