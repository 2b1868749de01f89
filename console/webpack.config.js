// Builds the plugin as the console loads it: a module-federation remote
// entry (plugin-entry.js), its plugin-manifest.json and the exposed modules,
// into dist/. ConsoleRemotePlugin (the SDK's webpack plugin) reads
// package.json's consolePlugin and console-extensions.json, and shares the
// modules the console provides (React, the SDK, react-router, ...) instead
// of bundling them.
const path = require('path');
const { ConsoleRemotePlugin } = require('@openshift-console/dynamic-plugin-sdk-webpack');

const production = process.env.NODE_ENV === 'production';

module.exports = {
  mode: production ? 'production' : 'development',
  context: path.resolve(__dirname, 'src'),
  entry: {},
  output: {
    path: path.resolve(__dirname, 'dist'),
    filename: production ? '[name]-bundle-[contenthash].min.js' : '[name]-bundle.js',
    chunkFilename: production ? '[name]-chunk-[chunkhash].min.js' : '[name]-chunk.js',
  },
  resolve: { extensions: ['.ts', '.tsx', '.js', '.jsx'] },
  module: {
    rules: [
      {
        test: /\.(jsx?|tsx?)$/,
        exclude: /node_modules/,
        use: [{ loader: 'ts-loader', options: { configFile: path.resolve(__dirname, 'tsconfig.json') } }],
      },
    ],
  },
  plugins: [new ConsoleRemotePlugin()],
  devtool: production ? false : 'source-map',
  optimization: { chunkIds: production ? 'deterministic' : 'named', minimize: production },
};
