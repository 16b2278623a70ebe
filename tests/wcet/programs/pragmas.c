/* Loop bounds stated in the source, in the style of TACLeBench
   (loopbound pragmas, docs/wcet.md "Annotation format").  No annotation
   file: every data-dependent loop is bounded by its pragma only.  The
   harness patches `target`, `n_in` and `m_in`. */
#define N 64
unsigned keys[N];
unsigned target = 94;
volatile unsigned n_in = 20;
volatile unsigned m_in = 6;
int grid[8][8];
int sink;

static void __attribute__((noinline)) fill(void)
{
  _Pragma( "loopbound min 64 max 64" )
  for ( unsigned i = 0; i < N; i++ )
    keys[i] = 3 * i + 1;
  keys[N - 1] = target;             /* the search below always ends */
}

/* a search whose end depends on the data: only the pragma bounds it */
int __attribute__((noinline)) search(unsigned t)
{
  int i = 0;
  _Pragma( "loopbound min 1 max 64" )
  while ( keys[i] != t )
    i++;
  return i;
}

/* a counted loop with an unknown count: GCC rotates it (a guard before
   the loop, the test at the bottom) */
int __attribute__((noinline)) rotated(unsigned n)
{
  int s = 0;
  _Pragma( "loopbound min 0 max 20" )
  for ( unsigned i = 0; i < n; i++ )
    s += keys[i] ^ i;
  return s;
}

/* a nested pair, each bounded by its own pragma */
int __attribute__((noinline)) nested(unsigned n, unsigned m)
{
  int s = 0;
  _Pragma( "loopbound min 0 max 8" )
  for ( unsigned i = 0; i < n; i++ ) {
    s += i;
    _Pragma( "loopbound min 0 max 8" )
    for ( unsigned j = 0; j < m; j++ )
      s += grid[i][j];
  }
  return s;
}

/* two loops written on one line: which pragma is which is not known */
int __attribute__((noinline)) one_line(unsigned n, unsigned m)
{
  int s = 0;
  _Pragma( "loopbound min 0 max 8" ) for ( unsigned i = 0; i < n; i++ ) _Pragma( "loopbound min 0 max 8" ) for ( unsigned j = 0; j < m; j++ ) s += grid[i][j] ^ j;
  return s;
}

/* a pragma the program contradicts: the loop always runs 16 times */
int __attribute__((noinline)) refuted(void)
{
  int s = 0;
  _Pragma( "loopbound min 4 max 4" )
  for ( unsigned i = 0; i < 16; i++ )
    s += keys[i];
  return s;
}

int main(void)
{
  unsigned n = n_in, m = m_in;
  if ( n > 8 )
    n = 8;
  if ( m > 8 )
    m = 8;
  fill();
  sink = search( target ) + rotated( n_in > 20 ? 20 : n_in ) + nested( n, m );
  return 0;
}

int one_line_main(void)
{
  unsigned n = n_in, m = m_in;
  if ( n > 8 )
    n = 8;
  if ( m > 8 )
    m = 8;
  return one_line( n, m );
}

int refuted_main(void)
{
  fill();
  return refuted();
}
